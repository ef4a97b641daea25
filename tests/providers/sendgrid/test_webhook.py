"""POST /v1/providers/sendgrid/events: verified, queued, applied once; refused without changing anything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from sendledger import names
from sendledger.bootstrap import Runtime
from sendledger.domain.provider import Provider
from sendledger.providers.sendgrid.events import SIGNATURE_HEADER, TIMESTAMP_HEADER
from sendledger.providers.sendgrid.settings import SendGridSettings
from tests.providers.conftest import built_world
from tests.providers.formats import provider_format
from tests.providers.worlds import SendGridWorld, poll, sendgrid_world
from tests.support.fakes import FakeClock

VECTOR = provider_format("sendgrid-webhook-signature-vector.json")
SIGNED_AT = datetime.fromtimestamp(int(VECTOR["timestamp"]), UTC)


@pytest.fixture
def sendgrid(services: Runtime, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[SendGridWorld]:
    with built_world(sendgrid_world, Provider.SENDGRID, services, clock, monkeypatch) as world:
        assert isinstance(world, SendGridWorld)
        yield world


def use_reference_key(world: SendGridWorld) -> None:
    """Verify with the vector's key (as if SendGrid's account key), at the vector's signing time."""
    boto3.client("secretsmanager").put_secret_value(
        SecretId=world.parts.services.settings.provider(SendGridSettings).webhook_key_secret_arn,
        SecretString=VECTOR["public_key"],
    )
    from aws_lambda_powertools.utilities import parameters

    parameters.clear_caches()
    world.parts.clock.current = SIGNED_AT


def post(world: SendGridWorld, body: str, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    return world.parts.api("POST", names.webhook_path("sendgrid"), raw_body=body, headers=headers)


def signed_headers(timestamp: str = VECTOR["timestamp"], signature: str = VECTOR["signature"]) -> dict[str, str]:
    return {"Content-Type": "application/json", SIGNATURE_HEADER: signature, TIMESTAMP_HEADER: timestamp}


def queue_depth(world: SendGridWorld) -> int:
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=world.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def suppressed(world: SendGridWorld, address: str) -> bool:
    return bool(world.parts.api("GET", f"/v1/suppressions/{address.replace('@', '%40')}")[2]["suppressed"])


def test_the_reference_batch_is_queued_then_applied_once_by_the_suppression_rules(sendgrid: SendGridWorld) -> None:
    use_reference_key(sendgrid)
    status, _, receipt = post(sendgrid, VECTOR["body"], signed_headers())
    assert status == 200 and receipt == {"received": 11, "queued": 9, "duplicate": False}  # open and click are skipped
    report = sendgrid.parts.ingestion.poll()
    assert (report.applied, report.poison) == (9, 0)
    assert suppressed(sendgrid, "unknown-user@example.com")  # bounce 5.1.1
    assert suppressed(sendgrid, "recipient@example.com")  # spamreport
    assert suppressed(sendgrid, "suppressed@example.com")  # dropped: Bounced Address
    assert not suppressed(sendgrid, "blocked@example.org")  # blocked: counted as transient
    # SendGrid retries a batch it thinks failed: the same events again change nothing.
    assert post(sendgrid, VECTOR["body"], signed_headers())[0] == 200
    again = sendgrid.parts.ingestion.poll()
    assert (again.applied, again.duplicates) == (0, 9)


@pytest.mark.parametrize(
    "headers",
    [
        signed_headers(signature=VECTOR["negative_cases"][3]["signature"]),  # another key's signature
        signed_headers(timestamp=str(int(VECTOR["timestamp"]) + 1)),  # timestamp changed
        {"Content-Type": "application/json"},  # unsigned
        signed_headers(signature="not base64"),
    ],
    ids=["other-key", "timestamp-changed", "unsigned", "garbage"],
)
def test_a_wrong_signature_is_403_and_changes_nothing(sendgrid: SendGridWorld, headers: dict[str, str]) -> None:
    use_reference_key(sendgrid)
    status, response_headers, problem = post(sendgrid, VECTOR["body"], headers)
    assert status == 403 and response_headers["content-type"] == "application/problem+json"
    assert problem["type"].endswith("/webhook-signature-invalid")
    assert queue_depth(sendgrid) == 0
    sendgrid.parts.ingestion.poll()
    assert not suppressed(sendgrid, "unknown-user@example.com")


def test_a_body_changed_after_signing_is_refused(sendgrid: SendGridWorld) -> None:
    use_reference_key(sendgrid)
    reformatted = json.dumps(json.loads(VECTOR["body"]), indent=2)
    assert post(sendgrid, reformatted, signed_headers())[0] == 403
    assert queue_depth(sendgrid) == 0


def test_a_stale_timestamp_is_refused_even_with_a_valid_signature(sendgrid: SendGridWorld) -> None:
    use_reference_key(sendgrid)
    sendgrid.parts.clock.advance(301)  # a replay of a captured POST, five minutes later
    status, _, problem = post(sendgrid, VECTOR["body"], signed_headers())
    assert status == 403 and "too old" in problem["detail"]
    assert problem["type"].endswith("/webhook-signature-stale")  # the type Mailgun's stale webhooks get
    assert queue_depth(sendgrid) == 0


def test_over_the_body_limit_is_413(sendgrid: SendGridWorld) -> None:
    body = json.dumps([{"event": "processed", "pad": "x" * (1024 * 1024)}])
    status, _, problem = post(sendgrid, body, signed_headers())
    assert status == 413 and problem["status"] == 413


def test_a_queue_failure_is_503_with_retry_after(sendgrid: SendGridWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    use_reference_key(sendgrid)
    hook = sendgrid.parts.api.runtime.webhook("sendgrid")
    assert hook is not None
    sink = hook.sink
    assert sink is not None

    def failing(**_: Any) -> dict[str, Any]:
        return {"Successful": [], "Failed": [{"Id": "0", "SenderFault": False, "Code": "InternalError"}]}

    monkeypatch.setattr(sink.client, "send_message_batch", failing)  # type: ignore[attr-defined]
    status, headers, _ = post(sendgrid, VECTOR["body"], signed_headers())
    assert status == 503 and headers["retry-after"]


def test_simulated_sends_arrive_as_signed_batches(sendgrid: SendGridWorld) -> None:
    status, _, sent = sendgrid.parts.api(
        "POST",
        "/v1/messages",
        {"channel": "email", "to": "bounce@simulator.amazonses.com", "template": {"id": "alert", "version": "1"},
         "params": {"summary": "s"}},
        headers={"Idempotency-Key": "k"},
    )  # fmt: skip
    assert status == 202 and sent["provider"] == "sendgrid"
    sendgrid.parts.clock.advance(5)
    poll(sendgrid)
    message = sendgrid.parts.api("GET", f"/v1/messages/{sent['message_id']}")[2]
    kinds = [entry.get("provider_event") for entry in message["history"] if entry["type"].startswith("event:")]
    assert message["state"] == "bounced" and sorted(kinds) == ["bounce", "processed"]
