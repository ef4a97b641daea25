"""Where a deployed test caller's simulated events go: test mode's own queue, never a provider's.

Each event travels in the shape its carrier's real path carries it (the carrier's slice says
which: providers/<name>/simulation.py), wrapped in an envelope that names the carrier by its
registry name (`{"carrier": "<name>", "body": ...}`).

The poller drains the queue with test mode's own lane (outcomes.py), which reads each body with
its carrier's parser and applies only events that name a test caller, in that caller's namespace.
The providers' queues and log groups therefore accept only their real producers (an events
topic, a webhook's intake, the provider itself), and the api's role holds no write on any of them.

A failed put is logged and dropped, as a provider's lost event would be: the send stays
`accepted` (the evidence says what was known), and no send ever fails because of it.
"""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters import sdk
from sendledger.providers.simulated.outcomes import envelope

logger = Logger(child=True)

OUTLET_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES)  # a duplicate event is a 1-request duplicate
SQS_BATCH = 10


class AwsOutlet:
    def __init__(self, *, queue_url: str) -> None:
        self.queue_url = queue_url
        self._client = sdk.LazyClient(lambda: sdk.client("sqs", OUTLET_CONFIG))

    def put(self, carrier: str, bodies: list[str], now: datetime) -> None:
        if not bodies:
            return
        if not self.queue_url:
            logger.warning(f"test mode: no test outcomes queue here; simulated {carrier} events dropped")
            return
        entries = [{"Id": str(n), "MessageBody": envelope(carrier, body)} for n, body in enumerate(bodies)]
        try:
            for start in range(0, len(entries), SQS_BATCH):
                answer = self._client.get().send_message_batch(
                    QueueUrl=self.queue_url, Entries=entries[start : start + SQS_BATCH]
                )
                if answer.get("Failed"):
                    logger.error(f"test mode: simulated {carrier} events refused", extra={"failed": answer["Failed"]})
        except (ClientError, BotoCoreError):
            logger.exception(f"test mode: simulated {carrier} events not queued")
