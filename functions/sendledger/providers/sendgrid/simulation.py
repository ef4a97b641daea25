"""What simulated SendGrid reports for an accepted send: its Event Webhook events.

`processed`, then the recipient's outcome by the rules (rules.py): `bounce` (5.1.1) for
`bounce@`, `dropped` (Bounced Address) for `suppressionlist@`, else `delivered`, and a
`spamreport` after it for `complaint@`. Every event carries the send's custom arguments at the top
level, as SendGrid's do. The shapes are SendGrid's documented ones
(tests/fixtures/provider-formats). Used by the local simulator (local/simulator/providers/
sendgrid.py) and by a test caller's deployed sends (`SendGridSimulation`, which the test-mode
carrier asks). Pure.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sendledger.providers.sendgrid.events import CATEGORY, ESCALATES_ARG, MESSAGE_ID_ARG
from sendledger.providers.simulated.rules import MailboxKind, TimedRecord, mailbox_simulator_kind

if TYPE_CHECKING:
    from sendledger.domain.events import DeliveryEvent
    from sendledger.ports.providers import SimulatedSend

MAX_EVENT_ID = 100  # sg_event_id: at most 100 characters (base64url)


def sendgrid_events(
    to: str,
    x_message_id: str,
    sg_message_id: str,
    sent_at: datetime,
    *,
    custom_args: Mapping[str, str],
    categories: Sequence[str] = (),
) -> list[TimedRecord]:
    """SendGrid's events for one accepted send to `to`, each with the time it happens."""
    base = {
        "email": to,
        "smtp-id": f"<{x_message_id}@ismtpd0001p1local.sendgrid.net>",
        "category": list(categories),
        "sg_message_id": sg_message_id,
        **custom_args,  # custom arguments come back at the top level of every event
    }

    def event(name: str, after_ms: int, **fields: Any) -> TimedRecord:
        at = sent_at + timedelta(milliseconds=after_ms)
        event_id = base64.urlsafe_b64encode(f"{name}-{sg_message_id}".encode()).decode().rstrip("=")
        record = {
            **base,
            "event": name,
            "timestamp": int(at.timestamp()),
            "sg_event_id": event_id[:MAX_EVENT_ID],
            **fields,
        }
        return at, record

    kind = mailbox_simulator_kind(to)
    events = [event("processed", 0)]
    if kind is MailboxKind.BOUNCE:
        events.append(
            event(
                "bounce", 2657, type="bounce", status="5.1.1", bounce_classification="Invalid Address",
                reason="550 5.1.1 The email account that you tried to reach does not exist",
            )
        )  # fmt: skip
    elif kind is MailboxKind.SUPPRESSIONLIST:
        events.append(event("dropped", 312, reason="Bounced Address", status="5.0.0"))
    else:
        events.append(event("delivered", 1534, response="250 2.0.0 OK", tls=1))
        if kind is MailboxKind.COMPLAINT:
            events.append(event("spamreport", 3012))
    return events


def clamp_timestamp(record: dict[str, Any], at: datetime, now: datetime) -> dict[str, Any]:
    """An event cannot be newer than its emission (a deployed send emits all of them at once)."""
    return record if at <= now else {**record, "timestamp": int(now.timestamp())}


class SendGridSimulation:
    """SendGrid for a test caller: its Event Webhook events, as the verified intake queues them."""

    def events(self, send: SimulatedSend) -> list[str]:
        from sendledger.providers.sendgrid.webhook import queued_bodies

        args = {MESSAGE_ID_ARG: send.message_id, ESCALATES_ARG: "1" if send.escalates else "0"}
        # The simulated id stands where SendGrid's message id goes: X-Message-Id and sg_message_id.
        simulated_id = send.provider_message_id
        events = sendgrid_events(send.to, simulated_id, simulated_id, send.at, custom_args=args, categories=[CATEGORY])
        return queued_bodies([clamp_timestamp(record, at, send.at) for at, record in events])

    def parse(self, body: str) -> list[DeliveryEvent]:
        from sendledger.providers.sendgrid.events import parse_queued

        return parse_queued(body)
