"""SQS: a provider's events queue (receive, delete after apply) and the escalation queue."""

from __future__ import annotations

import json
from typing import Any

from sendledger.adapters import sdk
from sendledger.ports.ingestion import QueueMessage

# Unlike provider sends, queue calls are safe to retry: SDK standard retries.
QUEUE_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES)


def sqs_client() -> Any:
    return sdk.client("sqs", QUEUE_CONFIG)


class _LazyClient:
    """A queue's client, made by its first call (a handler that never touches the queue pays
    nothing for it) and once, however many of the drain's threads call first."""

    def __init__(self, client: Any = None) -> None:
        self._client = sdk.LazyClient(sqs_client, client)

    @property
    def client(self) -> Any:
        return self._client.get()


class SqsEventQueue(_LazyClient):
    def __init__(self, queue_url: str, client: Any = None) -> None:
        super().__init__(client)
        self.queue_url = queue_url

    def receive(self, max_messages: int) -> list[QueueMessage]:
        response = self.client.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=max(1, min(max_messages, 10)),
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["ApproximateReceiveCount"],
        )
        return [
            QueueMessage(
                message_id=raw["MessageId"],
                receipt_handle=raw["ReceiptHandle"],
                body=raw.get("Body", ""),
                receive_count=int(raw.get("Attributes", {}).get("ApproximateReceiveCount", 1)),
            )
            for raw in response.get("Messages", [])
        ]

    def delete(self, messages: list[QueueMessage]) -> list[str]:
        failed: list[str] = []
        for start in range(0, len(messages), 10):
            chunk = messages[start : start + 10]
            response = self.client.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(index), "ReceiptHandle": m.receipt_handle} for index, m in enumerate(chunk)],
            )
            failed += [chunk[int(entry["Id"])].message_id for entry in response.get("Failed", [])]
        return failed

    def in_flight(self) -> int:
        attributes = self.client.get_queue_attributes(
            QueueUrl=self.queue_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        return int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0))


class SqsEscalationQueue(_LazyClient):
    def __init__(self, queue_url: str, client: Any = None) -> None:
        super().__init__(client)
        self.queue_url = queue_url

    def send(self, body: dict[str, Any], deduplication_id: str) -> str:
        kwargs: dict[str, Any] = {"QueueUrl": self.queue_url, "MessageBody": json.dumps(body, default=str)}
        if self.queue_url.endswith(".fifo"):
            # A FIFO escalation queue drops the copy a crashed-and-rerun poller would send.
            kwargs.update(MessageGroupId="escalations", MessageDeduplicationId=deduplication_id[:128])
        else:
            kwargs["MessageAttributes"] = {
                "deduplication_id": {"DataType": "String", "StringValue": deduplication_id},
            }
        return str(self.client.send_message(**kwargs)["MessageId"])
