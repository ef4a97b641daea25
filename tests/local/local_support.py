from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto import mock_aws

from local.resources import Resources, create_resources
from local.simulator import Simulator

FIXTURES = Path("/work/shared/fixtures/aws-formats")
LOCAL_FIXTURES = Path(__file__).parent / "fixtures"
# botocore's retries["max_attempts"] counts RETRIES (max_attempts=1 is two attempts);
# "total_max_attempts": 1 is what "SDK retries disabled" means.
NO_RETRIES = Config(retries={"total_max_attempts": 1, "mode": "standard"})


def load_fixture(name: str) -> dict[str, Any]:
    """The AWS reference payloads (copied next to the tests so the suite owns them)."""
    path = LOCAL_FIXTURES / name
    if not path.exists():
        path = FIXTURES / name
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


@pytest.fixture
def resources(aws: None) -> Resources:
    return create_resources()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 29, 10, 0, 0, 12000, tzinfo=UTC))


@pytest.fixture
def simulator(resources: Resources, clock: FakeClock) -> Iterator[Simulator]:
    sim = Simulator.install(
        ses_topic_arn=resources.ses_events_topic_arn,
        sms_success_log_group=resources.sms_success_log_group,
        sms_failure_log_group=resources.sms_failure_log_group,
        clock=clock,
    )
    yield sim
    sim.uninstall()


def sesv2_client() -> Any:
    return boto3.client("sesv2", config=NO_RETRIES)


def sns_client() -> Any:
    return boto3.client("sns", config=NO_RETRIES)


def send_email(to: str, *, message_id: str = "msg_01TEST", subject: str = "Hello") -> Any:
    return sesv2_client().send_email(
        FromEmailAddress="no-reply@example.com",
        Destination={"ToAddresses": [to]},
        Content={
            "Simple": {
                "Subject": {"Data": subject},
                "Body": {"Text": {"Data": "plain body"}, "Html": {"Data": "<p>html body</p>"}},
            }
        },
        ConfigurationSetName="sendledger-events",
        EmailTags=[{"Name": "sendledger-message-id", "Value": message_id}],
    )


def send_sms(phone: str, text: str = "alert: disk full") -> Any:
    return sns_client().publish(
        PhoneNumber=phone,
        Message=text,
        MessageAttributes={"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}},
    )


def drain_ses_events(resources: Resources) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(SNS envelope, SES record) pairs from the SES events queue, in order."""
    sqs = boto3.client("sqs")
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for _ in range(20):
        messages = sqs.receive_message(QueueUrl=resources.ses_events_queue_url, MaxNumberOfMessages=10).get(
            "Messages", []
        )
        if not messages:
            break
        for message in messages:
            envelope = json.loads(message["Body"])
            found.append((envelope, json.loads(envelope["Message"])))
            sqs.delete_message(QueueUrl=resources.ses_events_queue_url, ReceiptHandle=message["ReceiptHandle"])
    return found
