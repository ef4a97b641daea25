"""Where a deployed test caller's simulated events go: test mode's own queue, never a provider's.

Each event travels in the shape its carrier's real path carries it, wrapped in an envelope that
names the carrier (`{"carrier": "ses", "body": ...}`):

- SES: the event-publishing record, as SNS's notification carries it;
- SendGrid, Mailgun: each event as the provider's verified webhook intake queues it
  (providers/<name>/webhook.py `queued_bodies`);
- SNS (SMS): the delivery-status record, as SNS writes it to its log group.

The poller drains the queue with test mode's own lane (outcomes.py), which reads each body with
its carrier's parser and applies only events that name a test caller, in that caller's namespace.
The providers' queues and log groups therefore accept only their real producers (the SNS topic, a
webhook's intake, SNS itself), and the api's role holds no write on any of them.

A failed put is logged and dropped, as a provider's lost event would be: the send stays
`accepted` (the evidence says what was known), and no send ever fails because of it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters import sdk
from sendledger.providers.mailgun.webhook import queued_bodies as mailgun_queued
from sendledger.providers.sendgrid.webhook import queued_bodies as sendgrid_queued
from sendledger.providers.simulated import mailgun_events, sendgrid_events
from sendledger.providers.simulated.events import SmsStatus, TimedRecord, clamp_event_time
from sendledger.providers.simulated.outcomes import Carrier, envelope

logger = Logger(child=True)

OUTLET_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES)  # a duplicate event is a 1-request duplicate
SQS_BATCH = 10


def queue_account(queue_url: str, default: str = "000000000000") -> str:
    """The account id in a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`)."""
    parts = queue_url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else default


class AwsOutlet:
    def __init__(self, *, queue_url: str) -> None:
        self.queue_url = queue_url
        self._client: Any = None

    def ses_records(self, records: list[TimedRecord], now: datetime) -> None:
        bodies = [json.dumps(clamp_event_time(record, at, now)) for at, record in records]
        self._queue(Carrier.SES, bodies)

    def sendgrid_records(self, records: list[TimedRecord], now: datetime) -> None:
        events = [sendgrid_events.clamp_timestamp(record, at, now) for at, record in records]
        self._queue(Carrier.SENDGRID, sendgrid_queued(events))

    def mailgun_records(self, records: list[TimedRecord], now: datetime) -> None:
        bodies = [
            body for at, record in records for body in mailgun_queued(mailgun_events.clamp_timestamp(record, at, now))
        ]
        self._queue(Carrier.MAILGUN, bodies)

    def sms_status(self, status: SmsStatus, now: datetime) -> None:
        self._queue(Carrier.SNS, [json.dumps(status.record)])

    def _queue(self, carrier: Carrier, bodies: list[str]) -> None:
        if not bodies:
            return
        if not self.queue_url:
            logger.warning(f"test mode: no test outcomes queue here; simulated {carrier.value} events dropped")
            return
        if self._client is None:
            self._client = sdk.client("sqs", OUTLET_CONFIG)
        entries = [{"Id": str(n), "MessageBody": envelope(carrier, body)} for n, body in enumerate(bodies)]
        try:
            for start in range(0, len(entries), SQS_BATCH):
                answer = self._client.send_message_batch(
                    QueueUrl=self.queue_url, Entries=entries[start : start + SQS_BATCH]
                )
                if answer.get("Failed"):
                    logger.error(
                        f"test mode: simulated {carrier.value} events refused", extra={"failed": answer["Failed"]}
                    )
        except (ClientError, BotoCoreError):
            logger.exception(f"test mode: simulated {carrier.value} events not queued")
