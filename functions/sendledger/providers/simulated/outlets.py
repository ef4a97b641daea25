"""Where a deployed test caller's simulated events go: the carrier's own ingestion path.

- SES: each record in SNS's `Notification` envelope, sent to the SES events queue, which is
  what the configuration set's topic delivers there; the poller drains it as it drains SES's.
- SendGrid, Mailgun: each event as the provider's verified webhook intake queues it
  (providers/<name>/webhook.py `queued_bodies`), sent to that provider's webhook events queue: the
  signature is the trust of a POST from outside, and these events never left the deployment.
  The poller's queue lane for that provider applies them as it applies verified webhook events.
- SNS (SMS): each status record into the delivery-status log group SNS would write it to (a
  stream of this container's), where the `sms_delivery_logs` subscription and the poller's
  FilterLogEvents reconciliation read SNS's records.

A failed put is logged and dropped, as a provider's lost event would be: the send stays
`accepted` (the evidence says what was known), and no send ever fails because of it.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters import sdk
from sendledger.providers.mailgun.webhook import queued_bodies as mailgun_queued
from sendledger.providers.sendgrid.webhook import queued_bodies as sendgrid_queued
from sendledger.providers.simulated import mailgun_events, sendgrid_events
from sendledger.providers.simulated.events import SmsStatus, TimedRecord, clamp_event_time, sns_notification

logger = Logger(child=True)

OUTLET_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES)  # a duplicate event is a 1-request duplicate
TOPIC_NAME = "sendledger-test-mode"  # named in the envelope's TopicArn: the records came from no topic
SQS_BATCH = 10


def queue_account(queue_url: str, default: str = "000000000000") -> str:
    """The account id in a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`)."""
    parts = queue_url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else default


class AwsOutlet:
    def __init__(
        self,
        *,
        region: str,
        ses_queue_url: str,
        success_log_group: str,
        failure_log_group: str,
        sendgrid_queue_url: str = "",
        mailgun_queue_url: str = "",
    ) -> None:
        self.region = region
        self.ses_queue_url = ses_queue_url
        self.sendgrid_queue_url = sendgrid_queue_url
        self.mailgun_queue_url = mailgun_queue_url
        self.groups = {False: success_log_group, True: failure_log_group}
        self.stream = f"sendledger-test-mode/{uuid.uuid4().hex}"  # this container's
        self._streams: set[str] = set()
        self._clients: dict[str, Any] = {}

    def _client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = sdk.client(service, OUTLET_CONFIG)
        return self._clients[service]

    def ses_records(self, records: list[TimedRecord], now: datetime) -> None:
        if not records:
            return
        if not self.ses_queue_url:
            logger.warning("test mode: no SES events queue here; simulated SES events dropped")
            return
        topic = f"arn:aws:sns:{self.region}:{queue_account(self.ses_queue_url)}:{TOPIC_NAME}"
        bodies = [json.dumps(sns_notification(clamp_event_time(record, at, now), topic, now)) for at, record in records]
        self._queue(self.ses_queue_url, bodies, "SES")

    def sendgrid_records(self, records: list[TimedRecord], now: datetime) -> None:
        if not self.sendgrid_queue_url:
            logger.warning("test mode: no SendGrid events queue here; simulated SendGrid events dropped")
            return
        events = [sendgrid_events.clamp_timestamp(record, at, now) for at, record in records]
        self._queue(self.sendgrid_queue_url, sendgrid_queued(events), "SendGrid")

    def mailgun_records(self, records: list[TimedRecord], now: datetime) -> None:
        if not self.mailgun_queue_url:
            logger.warning("test mode: no Mailgun webhook events queue here; simulated Mailgun events dropped")
            return
        bodies = [
            body for at, record in records for body in mailgun_queued(mailgun_events.clamp_timestamp(record, at, now))
        ]
        self._queue(self.mailgun_queue_url, bodies, "Mailgun")

    def _queue(self, queue_url: str, bodies: list[str], provider: str) -> None:
        entries = [{"Id": str(n), "MessageBody": body} for n, body in enumerate(bodies)]
        try:
            for start in range(0, len(entries), SQS_BATCH):
                answer = self._client("sqs").send_message_batch(
                    QueueUrl=queue_url, Entries=entries[start : start + SQS_BATCH]
                )
                if answer.get("Failed"):
                    logger.error(f"test mode: simulated {provider} events refused", extra={"failed": answer["Failed"]})
        except (ClientError, BotoCoreError):
            logger.exception(f"test mode: simulated {provider} events not queued")

    def sms_status(self, status: SmsStatus, now: datetime) -> None:
        group = self.groups[status.failure]
        if not group:
            logger.warning("test mode: no SMS delivery-status log group here; simulated status dropped")
            return
        logs = self._client("logs")
        try:
            if group not in self._streams:
                with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
                    logs.create_log_stream(logGroupName=group, logStreamName=self.stream)
                self._streams.add(group)
            at = int(min(status.at, now).timestamp() * 1000)
            logs.put_log_events(
                logGroupName=group,
                logStreamName=self.stream,
                logEvents=[{"timestamp": at, "message": json.dumps(status.record)}],
            )
        except (ClientError, BotoCoreError):
            logger.exception("test mode: simulated SMS status not logged")
