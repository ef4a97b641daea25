"""A queued message's next attempt: ChangeMessageVisibility on the queue it came from.

One attempt with short timeouts: the call is part of a callback's time budget (see
CALL_SECONDS), and a failed call loses nothing: the message, reported failed, comes back when
the queue's own visibility timeout ends (a longer wait than the backoff asked for).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sendledger.adapters import sdk

_CONNECT_SECONDS, _READ_SECONDS = 1, 2
CALL_SECONDS = _CONNECT_SECONDS + _READ_SECONDS  # the longest one visibility change can take
VISIBILITY_CONFIG = sdk.config(retries=sdk.NO_RETRIES, connect_timeout=_CONNECT_SECONDS, read_timeout=_READ_SECONDS)


class SqsVisibility:
    def __init__(self, queue_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self.client = client or sdk.client("sqs", VISIBILITY_CONFIG)

    @classmethod
    @cache
    def of_queue(cls, queue_arn: str) -> SqsVisibility:
        """By the `eventSourceARN` an SQS event record names (its URL asked once per container)."""
        client = sdk.client("sqs", VISIBILITY_CONFIG)
        _, _, _, _, account, name = queue_arn.split(":", 5)
        url = client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        return cls(str(url), client)

    def retry_in(self, receipt_handle: str, seconds: int) -> None:
        self.client.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=seconds
        )
