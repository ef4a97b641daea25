"""The simulated carriers' outlet over the fakes: SES records onto the SES events queue in SNS's
envelope, SNS status records into the delivery-status log groups (as outlets.py does over AWS)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from sendledger.providers.simulated.events import SmsStatus, TimedRecord, clamp_event_time, sns_notification
from tests.unit.fakes.queues import FakeEventQueue, FakeLogReader

TOPIC = "arn:aws:sns:us-east-1:123456789012:sendledger-test-mode"


@dataclass
class FakeOutlet:
    ses_queue: FakeEventQueue
    logs: FakeLogReader
    success_group: str
    failure_group: str
    put: list[str] = field(default_factory=list)  # what went out, by kind

    def ses_records(self, records: list[TimedRecord], now: datetime) -> None:
        for at, record in records:
            self.ses_queue.put(sns_notification(clamp_event_time(record, at, now), TOPIC, now))
            self.put.append(f"ses:{record['eventType']}")

    def sms_status(self, status: SmsStatus, now: datetime) -> None:
        group = self.failure_group if status.failure else self.success_group
        self.logs.write(group, json.dumps(status.record), int(min(status.at, now).timestamp() * 1000))
        self.put.append(f"sms:{status.record['status']}")

    def sendgrid_records(self, records: list[TimedRecord], now: datetime) -> None:
        self.put.extend(f"sendgrid:{record['event']}" for _, record in records)

    def mailgun_records(self, records: list[TimedRecord], now: datetime) -> None:
        self.put.extend(f"mailgun:{record['event']}" for _, record in records)
