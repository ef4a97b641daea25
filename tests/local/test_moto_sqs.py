"""The retention check of local/moto_sqs.py keeps moto's rule: what a receive returns is unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.sqs.models import SQSBackend, sqs_backends

from local import moto_sqs
from local.constants import ACCOUNT_ID, REGION

RETENTION_SECONDS = 60  # SQS's minimum


def received_bodies(monkeypatch: pytest.MonkeyPatch, check: Callable[..., bool]) -> list[str]:
    monkeypatch.setattr(SQSBackend, "is_message_valid_based_on_retention_period", check)
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        url = sqs.create_queue(QueueName="retention", Attributes={"MessageRetentionPeriod": str(RETENTION_SECONDS)})[
            "QueueUrl"
        ]
        for body in ("fresh-1", "just-inside", "expired", "fresh-2"):
            sqs.send_message(QueueUrl=url, MessageBody=body)
        queue: Any = sqs_backends[ACCOUNT_ID][REGION].get_queue("retention")
        ages = {"expired": RETENTION_SECONDS + 1, "just-inside": RETENTION_SECONDS - 5}
        for message in queue._messages:
            message.sent_timestamp -= ages.get(message.body, 0) * 1000
        found = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        return sorted(message["Body"] for message in found)


def test_a_receive_returns_what_moto_returns_and_skips_messages_past_their_retention(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ours = received_bodies(monkeypatch, moto_sqs.is_message_valid_based_on_retention_period)
    # moto ends the receive at the first expired message (it does not skip it): kept as it is.
    assert ours == ["fresh-1", "just-inside"]
    assert ours == received_bodies(monkeypatch, moto_sqs.MOTO_IS_MESSAGE_VALID)
