"""Building commands and delivery events for the use-case tests (no AWS, no parsing)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sendledger.bootstrap import Runtime
from sendledger.domain.escalation import Escalation
from sendledger.domain.events import DeliveryEvent, EventKind
from sendledger.domain.messages import Template
from sendledger.domain.recipients import Channel
from sendledger.providers.ses.events import classify_bounce
from sendledger.providers.sns.events import classify_failure
from sendledger.usecases.poll import CycleReport
from sendledger.usecases.results import SendResult
from sendledger.usecases.send_command import SendCommand
from tests.support.fakes import PRINCIPAL, caller_id
from tests.unit.fakes import FakeWorld

ALICE = "alice@example.com"
PHONE = "+12065550123"
ALERT = Template("alert", "1")
LINK = re.compile(r"reset\?token=([A-Za-z0-9_-]+)")


def seconds_left() -> float:
    return 300.0


def command(
    key: str | None = "key-1",
    to: str = ALICE,
    summary: str = "disk full",
    channel: Channel = Channel.EMAIL,
    category: str = "alert",
    principal: str = PRINCIPAL,
    escalation: dict[str, Any] | None = None,
) -> SendCommand:
    return SendCommand(
        channel=channel,
        to=to,
        template=ALERT,
        params={"summary": summary},
        category=category,
        caller=caller_id(principal),
        idempotency_header=key,
        escalation=Escalation.from_json(escalation) if escalation else None,
    )


def send(services: Runtime, key: str | None = "key-1", **changes: Any) -> SendResult:
    return services.sender.send(command(key, **changes), seconds_left)


def poll_due_work(world: FakeWorld) -> dict[str, int]:
    """The poller's due-work step alone (leases, unknown, pending): what it did, by outcome."""
    report = CycleReport()
    world.runtime.poll_cycle.due_work.run(seconds_left, report)
    return report.resolved


def ses_event(
    kind: EventKind,
    message_id: str | None,
    at: datetime,
    recipient: str = ALICE,
    event_id: str | None = None,
    bounce: tuple[str, str] | None = None,
) -> DeliveryEvent:
    """An SES event as parse_sqs_body would hand it over (tagged with our message id)."""
    key = f"email:{recipient.lower()}"
    bounce_type, bounce_subtype = bounce or (None, None)
    if kind is EventKind.BOUNCE and bounce is None:
        bounce_type, bounce_subtype = "Permanent", "General"
    return DeliveryEvent(
        source="ses",
        event_id=event_id or f"ses-0001#{kind.value}#{at.isoformat()}",
        kind=kind,
        occurred_at=at,
        recipient_key=key,
        message_id=message_id,
        provider_message_id="ses-0001",
        bounce_type=bounce_type,
        bounce_subtype=bounce_subtype,
        evidence={"provider_event": kind.value},
        verdict=classify_bounce(bounce_type, bounce_subtype, None) if kind is EventKind.BOUNCE else None,
    )


def sms_event(
    provider_message_id: str, at: datetime, success: bool = True, response: str = "Message has been accepted by phone"
) -> DeliveryEvent:
    """An SNS SMS delivery-status record: it names only SNS's message id and the destination."""
    status = "SUCCESS" if success else "FAILURE"
    return DeliveryEvent(
        source="sms",
        event_id=f"{provider_message_id}#{status}",
        kind=EventKind.SMS_SUCCESS if success else EventKind.SMS_FAILURE,
        occurred_at=at,
        recipient_key=f"sms:{PHONE}",
        provider_message_id=provider_message_id,
        provider_response=response,
        evidence={"provider_event": status, "provider_response": response},
        verdict=None if success else classify_failure(response),
    )


def tokens_mailed(world: FakeWorld) -> list[str]:
    """The reset tokens in the mails the provider has."""
    found = []
    for call in world.email.outbox:
        match = LINK.search(call.content.text)
        assert match, call.content.text
        found.append(match.group(1))
    return found
