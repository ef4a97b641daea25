"""The simulated carriers' outlet over the fakes: SES records onto the SES events queue in SNS's
envelope, SNS status records into the delivery-status log groups (as those providers' real paths
carry them; deployed, outlets.py puts every carrier's events on test mode's own queue)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from sendledger.providers.ses.simulation import sns_notification
from tests.unit.fakes.queues import FakeEventQueue, FakeLogReader

TOPIC = "arn:aws:sns:us-east-1:123456789012:sendledger-test-mode"


@dataclass
class FakeOutlet:
    ses_queue: FakeEventQueue
    logs: FakeLogReader
    success_group: str
    failure_group: str
    sent: list[str] = field(default_factory=list)  # what went out, by carrier and kind

    def put(self, carrier: str, bodies: list[str], now: datetime) -> None:
        for body in bodies:
            record = json.loads(body)
            if carrier == "ses":
                self.ses_queue.put(sns_notification(record, TOPIC, now))
                self.sent.append(f"ses:{record['eventType']}")
            elif carrier == "sns":
                group = self.failure_group if record["status"] == "FAILURE" else self.success_group
                self.logs.write(group, body, int(now.timestamp() * 1000))
                self.sent.append(f"sms:{record['status']}")
            else:
                self.sent.append(f"{carrier}:{record['event']}")
