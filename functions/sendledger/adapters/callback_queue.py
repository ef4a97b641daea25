"""The callback queue a record came from, and its DLQ: SendMessage with the record's schedule.

One attempt with short timeouts: the call is part of a callback's time budget (see
CALL_SECONDS), and a failed call loses nothing: the record, reported failed, comes back when
the queue's own visibility timeout ends (a longer wait than the backoff asked for).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from sendledger.adapters import sdk
from sendledger.domain.callback_schedule import ATTEMPTS_ATTRIBUTE, DUE_ATTRIBUTE, Queued

_CONNECT_SECONDS, _READ_SECONDS = 1, 2
CALL_SECONDS = _CONNECT_SECONDS + _READ_SECONDS  # the longest one put-back can take
VISIBILITY_CONFIG = sdk.config(retries=sdk.NO_RETRIES, connect_timeout=_CONNECT_SECONDS, read_timeout=_READ_SECONDS)
REASON_ATTRIBUTE = "sendledger-reason"  # on a dead-lettered record: why


def schedule_attributes(queued: Queued) -> dict[str, dict[str, str]]:
    attributes = {ATTEMPTS_ATTRIBUTE: {"DataType": "Number", "StringValue": str(queued.attempts)}}
    if queued.due_at is not None:
        attributes[DUE_ATTRIBUTE] = {"DataType": "Number", "StringValue": str(int(queued.due_at.timestamp()))}
    return attributes


class SqsCallbackQueue:
    def __init__(self, queue_url: str, dlq_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self.dlq_url = dlq_url
        self.client = client or sdk.client("sqs", VISIBILITY_CONFIG)

    @classmethod
    @cache
    def of_queue(cls, queue_arn: str) -> SqsCallbackQueue:
        """By the `eventSourceARN` an SQS event record names: its URL and its redrive target's,
        asked once per container."""
        client = sdk.client("sqs", VISIBILITY_CONFIG)
        url = _url(client, queue_arn)
        redrive = client.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
        dlq_arn = json.loads(redrive["RedrivePolicy"])["deadLetterTargetArn"]
        return cls(url, _url(client, dlq_arn), client)

    def put_back(self, queued: Queued, delay_seconds: int) -> None:
        self.client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=queued.body,
            DelaySeconds=delay_seconds,
            MessageAttributes=schedule_attributes(queued),
        )

    def dead_letter(self, queued: Queued, why: str) -> None:
        attributes = {**schedule_attributes(queued), REASON_ATTRIBUTE: {"DataType": "String", "StringValue": why}}
        self.client.send_message(QueueUrl=self.dlq_url, MessageBody=queued.body, MessageAttributes=attributes)


def _url(client: Any, queue_arn: str) -> str:
    _, _, _, _, account, name = queue_arn.split(":", 5)
    return str(client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])
