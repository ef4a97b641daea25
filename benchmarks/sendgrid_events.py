"""SendGrid events (EMAIL_PROVIDER=sendgrid): DynamoDB requests and capacity per new and duplicate event.

The api handler sends through the real SendGrid adapter, over HTTP, to the local simulator's
SendGrid API (keys in Secrets Manager, as deployed); the simulator posts its signed webhook
batch to the webhooks Lambda's route (the api serves none), which verifies it and queues one SQS
message per event. Each queued event is then applied by the one ingestion routine the poller's drain calls
per message (new), and once more (duplicate), with the DynamoDB requests of each counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from benchmarks import ours
from benchmarks.aws import World, lambda_context, status_of
from benchmarks.counting import counting
from benchmarks.environment import ACCOUNT_ID, REGION

# Labelled: the SES measurement before this one already suppressed the bare simulator addresses.
OUTCOMES = {
    "delivered": "bench-sendgrid@example.com",
    "bounce": "bounce+sendgrid@simulator.amazonses.com",
    "dropped": "suppressionlist+sendgrid@simulator.amazonses.com",
    "complaint": "complaint+sendgrid@simulator.amazonses.com",
}
EVENTS_DUE_AFTER = timedelta(seconds=5)  # past the simulator's last event of a send (+3 s)


@contextmanager
def sendgrid_selected(simulator: Any) -> Iterator[str]:
    """The runtime switched to SendGrid for the block (adapter, webhook, events queue); yields the queue URL."""
    from local.simulator.http import SimulatorServer
    from local.simulator.providers.sendgrid import side_of
    from sendledger import bootstrap
    from sendledger.domain.provider import Provider
    from sendledger.providers.sendgrid.settings import SendGridSettings

    runtime = bootstrap.runtime()
    services = runtime
    server = SimulatorServer(side_of(simulator).handle, "sendgrid")
    server.start()
    secrets, sqs = boto3.client("secretsmanager", region_name=REGION), boto3.client("sqs", region_name=REGION)
    api_key = secrets.create_secret(Name="bench/sendgrid-api-key", SecretString=side_of(simulator).api_key)["ARN"]
    public_key = secrets.create_secret(Name="bench/sendgrid-webhook", SecretString=side_of(simulator).public_key)
    queue_url: str = sqs.create_queue(QueueName="bench-sendgrid-events")["QueueUrl"]
    saved = services.settings, services.email
    services.settings = services.settings.replace({"email_provider": Provider.SENDGRID}).configure_provider(
        SendGridSettings,
        api_base=server.url,
        api_key_secret_arn=api_key,
        webhook_key_secret_arn=public_key["ARN"],
        events_queue_url=queue_url,
    )
    services.email = bootstrap.email_sender(services.settings)
    try:
        yield queue_url
    finally:
        services.settings, services.email = saved
        server.stop()


def measure(world: World, simulator: Any) -> dict[str, Any]:
    from local.apigateway import build_event
    from local.simulator.providers.sendgrid import side_of
    from sendledger import bootstrap
    from sendledger.handlers import webhooks
    from sendledger.names import webhook_path
    from sendledger.providers.sendgrid.events import parse_queued
    from sendledger.usecases.ingest import IngestReport

    world.refresh_watermarks()
    with sendgrid_selected(simulator) as queue_url:
        for outcome, address in OUTCOMES.items():
            status, _, body = ours.post("/v1/messages", ours.email_body(address), key=f"events-sendgrid-{outcome}")
            if status != 202 or body.get("provider") != "sendgrid":
                raise RuntimeError(f"SendGrid send to {address} failed: {status} {body}")
        real_clock = simulator.clock
        simulator.clock = lambda: datetime.now(UTC) + EVENTS_DUE_AFTER
        webhook: dict[str, Any] = {}
        services = bootstrap.runtime()  # switched to SendGrid above

        def post(body: bytes, headers: dict[str, str]) -> int:
            event = build_event(
                method="POST",
                target=webhook_path("sendgrid"),
                headers=headers.items(),
                body=body,
                principal="",  # unauthenticated: SendGrid signs instead
                account_id=ACCOUNT_ID,
            )
            with counting(ours.ledger()) as log:
                response = webhooks.lambda_handler(event, lambda_context("sendledger-webhooks"), runtime=services)
            status, payload = status_of(response)
            webhook.update(status=status, answer=payload, ddb_requests=log.total, body_bytes=len(body))
            return status

        try:
            side_of(simulator).flush(post)
        finally:
            simulator.clock = real_clock
        if webhook.get("status") != 200:
            raise RuntimeError(f"the SendGrid webhook was not accepted: {webhook}")
        from benchmarks.event_feed import drain_queue, event_figure

        new: list[dict[str, Any]] = []
        duplicate: list[dict[str, Any]] = []
        for message in drain_queue(queue_url):
            parsed = parse_queued(message["Body"])
            if not parsed:
                continue
            [event] = parsed
            kind = f"sendgrid:{json.loads(message['Body'])['event']}"
            for figures in (new, duplicate):
                report = IngestReport()
                with counting(ours.ledger()) as log:
                    services.sink.apply(event, report)
                figures.append(event_figure(log, kind, {"applied": report.applied, "duplicates": report.duplicates}))
    if not new:
        raise RuntimeError("the SendGrid simulator produced no events")
    return {
        "method": (
            "the webhooks Lambda's route (signed batch from the simulator, verified, one SQS message per event), "
            "then the ingestion routine of the poller's drain, once per queued event"
        ),
        "webhook": webhook,
        "new": new,
        "duplicate": duplicate,
    }
