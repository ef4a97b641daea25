"""SQS as the sink of verified webhook events: one message per event, sent in batches of 10.

One event per message keeps the poller's per-recipient lanes and per-message poison handling as
for events published to a queue. A batch entry that fails makes the whole webhook answer 503: the provider retries the
POST, and what was queued already is applied once (the apply dedupes by event id).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters.sqs import sqs_client
from sendledger.domain.errors import DependencyUnavailable

BATCH = 10


class SqsEventSink:
    def __init__(self, queue_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self.client = client or sqs_client()

    def put(self, bodies: list[str]) -> None:
        for start in range(0, len(bodies), BATCH):
            chunk = bodies[start : start + BATCH]
            try:
                response = self.client.send_message_batch(
                    QueueUrl=self.queue_url,
                    Entries=[{"Id": str(index), "MessageBody": body} for index, body in enumerate(chunk)],
                )
            except (ClientError, BotoCoreError) as exc:
                raise DependencyUnavailable(f"events queue unavailable ({type(exc).__name__}); retry") from exc
            if response.get("Failed"):
                raise DependencyUnavailable("events queue refused part of the batch; retry")
