"""A queued message's next attempt: ChangeMessageVisibility on the queue it came from."""

from __future__ import annotations

from functools import cache
from typing import Any

from sendledger.adapters.sqs import sqs_client


class SqsVisibility:
    def __init__(self, queue_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self.client = client or sqs_client()

    @classmethod
    @cache
    def of_queue(cls, queue_arn: str) -> SqsVisibility:
        """By the `eventSourceARN` an SQS event record names (its URL asked once per container)."""
        client = sqs_client()
        _, _, _, _, account, name = queue_arn.split(":", 5)
        url = client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        return cls(str(url), client)

    def retry_in(self, receipt_handle: str, seconds: int) -> None:
        self.client.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=seconds
        )
