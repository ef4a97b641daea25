"""LocalStack wiring against a real (threaded) moto server, with fake handlers.

Independent of the real Lambda code: proves resources, env vars, the simulator hooks, the
SES → SNS → SQS path over HTTP, SMS log groups + subscription delivery and /local/poll.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import requests

import local.stack as stack_module
from local.constants import LOCAL_PRINCIPAL, SMS_FAILURE_LOG_GROUP, SMS_SUCCESS_LOG_GROUP
from local.ports import free_ports
from local.stack import LocalStack
from sendledger import names
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from sendledger.providers.ses.settings import ENV_CONFIGURATION_SET as SES_CONFIGURATION_SET_VAR
from sendledger.providers.ses.settings import ENV_EVENTS_QUEUE_URL as SES_EVENTS_QUEUE_URL_VAR
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS


class Recorder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[dict[str, Any]] = []
        self.contexts: list[Any] = []

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.events.append(event)
        self.contexts.append(context)
        if self.name == "api":
            return {"statusCode": 200, "headers": {}, "body": json.dumps({"status": "ok"})}
        return {"handled": len(self.events)}


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LocalStack, dict[str, Recorder]]]:
    saved = dict(os.environ)
    recorders = {"api": Recorder("api"), "poller": Recorder("poller"), "sms": Recorder("sms")}
    by_name = {
        names.API_HANDLER: recorders["api"],
        names.POLLER_HANDLER: recorders["poller"],
        names.SMS_DELIVERY_LOGS_HANDLER: recorders["sms"],
    }
    monkeypatch.setattr(stack_module, "load_handler", by_name.__getitem__)
    monkeypatch.setenv(names.ENV_POLL_INTERVAL_SECONDS, "3600")  # only explicit polls
    monkeypatch.setenv(names.ENV_RESET_WINDOW_SECONDS, "42")  # a user setting survives
    port, moto_port = free_ports(2)
    stack = LocalStack(port=port, moto_port=moto_port)
    stack.start()
    try:
        yield stack, recorders
    finally:
        # moto's backends are process-wide and outlive its server: the next stack starts empty.
        requests.post(f"{stack.aws_endpoint}/moto-api/reset", timeout=REQUEST_TIMEOUT_SECONDS)
        stack.stop()
        os.environ.clear()
        os.environ.update(saved)
        boto3.setup_default_session()


def test_stack_wiring(running: tuple[LocalStack, dict[str, Recorder]]) -> None:
    stack, recorders = running
    assert stack.gateway is not None
    base = stack.gateway.url
    endpoint = f"http://127.0.0.1:{stack.moto_port}"
    assert os.environ["AWS_ENDPOINT_URL"] == endpoint
    assert os.environ[names.ENV_RESET_WINDOW_SECONDS] == "42"
    assert os.environ[names.ENV_LOCAL_PRINCIPAL] == LOCAL_PRINCIPAL
    assert os.environ["POWERTOOLS_METRICS_NAMESPACE"] == names.METRICS_NAMESPACE

    assert requests.get(f"{base}/healthz", timeout=REQUEST_TIMEOUT_SECONDS).json() == {"status": "ok"}
    assert recorders["api"].events[0]["path"] == "/healthz"

    # Resources exist on the moto server.
    table = boto3.client("dynamodb").describe_table(TableName=os.environ[names.ENV_LEDGER_TABLE])
    assert table["Table"]["GlobalSecondaryIndexes"][0]["IndexName"] == names.DUE_WORK_INDEX
    ttl = boto3.client("dynamodb").describe_time_to_live(TableName=os.environ[names.ENV_LEDGER_TABLE])
    assert ttl["TimeToLiveDescription"]["AttributeName"] == names.TABLE_TTL_ATTRIBUTE
    groups = {group["logGroupName"] for group in boto3.client("logs").describe_log_groups()["logGroups"]}
    assert {SMS_SUCCESS_LOG_GROUP, SMS_FAILURE_LOG_GROUP} <= groups

    # A send from a client built after start (as the handlers do) is simulated.
    sesv2 = boto3.client("sesv2")
    sent = sesv2.send_email(
        FromEmailAddress=os.environ[names.ENV_SENDER_EMAIL],
        Destination={"ToAddresses": ["bounce@simulator.amazonses.com"]},
        Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
        ConfigurationSetName=os.environ[SES_CONFIGURATION_SET_VAR],
        EmailTags=[{"Name": SES_MESSAGE_ID_TAG, "Value": "msg_1"}],
    )
    boto3.client("sns").publish(PhoneNumber="+12065550165", Message="hi")
    outbox = requests.get(f"{base}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert [entry["channel"] for entry in outbox] == ["email", "sms"]
    assert outbox[0]["provider_message_id"] == sent["MessageId"]

    poll = requests.post(f"{base}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert poll["flush"]["ses_events_published"] == 2
    assert poll["flush"]["sms_records_delivered"] == 1
    assert poll["poller"] == {"handled": 1}
    scheduled = recorders["poller"].events[0]
    assert scheduled["detail-type"] == "Scheduled Event"
    assert recorders["sms"].events[0]["awslogs"]["data"]

    sqs = boto3.client("sqs")
    bodies = [
        json.loads(json.loads(message["Body"])["Message"])
        for message in sqs.receive_message(QueueUrl=os.environ[SES_EVENTS_QUEUE_URL_VAR], MaxNumberOfMessages=10)[
            "Messages"
        ]
    ]
    assert sorted(body["eventType"] for body in bodies) == ["Bounce", "Send"]


def tracked_moto_instances() -> int:
    from moto.core.model_instances import model_data

    return sum(len(model.instances_tracked) for models in model_data.values() for model in models.values())  # type: ignore[attr-defined]


def test_scheduler_tick_forgets_moto_model_instances(running: tuple[LocalStack, dict[str, Recorder]]) -> None:
    """A long `make run` must not keep every model instance moto creates (each item version and
    before-image a TransactWriteItems makes): the registry only feeds moto's dashboard."""
    stack, recorders = running
    assert stack.scheduler is not None
    table = os.environ[names.ENV_LEDGER_TABLE]

    def key(pk: str) -> dict[str, Any]:
        return {names.TABLE_PARTITION_KEY: {"S": pk}, names.TABLE_SORT_KEY: {"S": "s"}}

    puts = [{"Put": {"TableName": table, "Item": key(f"p{i}")}} for i in range(3)]
    boto3.client("dynamodb").transact_write_items(TransactItems=puts)
    assert tracked_moto_instances() > 0

    stack.scheduler.run_once()

    assert stack.scheduler.failures == 0
    assert len(recorders["poller"].events) == 1  # the tick still polled
    assert tracked_moto_instances() == 0
    # Live data stays in moto's backend; only the registry is cleared.
    assert "Item" in boto3.client("dynamodb").get_item(TableName=table, Key=key("p0"))


def test_a_start_that_fails_after_the_gateway_exists_still_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal during start abandons it there: stop() must not wait for a serve loop that never ran."""
    saved = dict(os.environ)
    recorder = Recorder("any")
    monkeypatch.setattr(stack_module, "load_handler", lambda _dotted: recorder)
    monkeypatch.setenv(names.ENV_POLL_INTERVAL_SECONDS, "3600")

    def interrupted(_self: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(stack_module.Scheduler, "start", interrupted)
    port, moto_port = free_ports(2)
    stack = LocalStack(port=port, moto_port=moto_port)
    try:
        with pytest.raises(KeyboardInterrupt):
            stack.start()
        assert stack.gateway is not None
        # moto's backends are process-wide and outlive its server: the next stack starts empty.
        requests.post(f"{stack.aws_endpoint}/moto-api/reset", timeout=REQUEST_TIMEOUT_SECONDS)
        stopper = threading.Thread(target=stack.stop, daemon=True)
        stopper.start()
        stopper.join(timeout=stack_module.STOP_WAIT_SECONDS + 5)
        assert not stopper.is_alive(), "stop() hung on a gateway that never served"
    finally:
        os.environ.clear()
        os.environ.update(saved)
        boto3.setup_default_session()


def test_stop_gives_cycles_in_flight_one_shared_wait_then_reports_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A poll and a status-out cycle both mid-tick: stop() waits STOP_WAIT_SECONDS for the two
    together, not that long for each, and then says a cycle is still running."""
    release = threading.Event()
    entered = threading.Semaphore(0)
    waited: list[float] = []

    def blocked_tick() -> None:
        entered.release()
        release.wait(REQUEST_TIMEOUT_SECONDS)

    def tick_at_once_then_stop() -> stack_module.Scheduler:
        waits = iter([False])
        scheduler = stack_module.Scheduler(blocked_tick, 3600, wait=lambda _seconds: next(waits, True))
        join = scheduler.stop

        def recorded_stop(*, timeout: float) -> None:
            waited.append(timeout)
            join(timeout=timeout)

        monkeypatch.setattr(scheduler, "stop", recorded_stop)
        return scheduler

    monkeypatch.setattr(stack_module, "STOP_WAIT_SECONDS", 0.2)
    port, moto_port = free_ports(2)
    stack = LocalStack(port=port, moto_port=moto_port)
    stack.scheduler, stack.status_scheduler = tick_at_once_then_stop(), tick_at_once_then_stop()
    for scheduler in stack.schedulers:
        scheduler.start()
    assert entered.acquire(timeout=REQUEST_TIMEOUT_SECONDS) and entered.acquire(timeout=REQUEST_TIMEOUT_SECONDS)
    try:
        stack.stop()
        assert len(waited) == 2 and sum(waited) <= 0.2
        assert stack.cycle_in_flight
    finally:
        release.set()
    for scheduler in stack.schedulers:
        scheduler.stop(timeout=REQUEST_TIMEOUT_SECONDS)
    assert not stack.cycle_in_flight
