"""What simulated Mailgun reports for an accepted send: its events, as the Events API lists them
and its webhooks carry them (`event-data`).

`accepted`, then the recipient's outcome by the rules (rules.py): failed/permanent/bounce (550
5.1.1) for `bounce@`, failed/permanent/suppress-bounce (605) for `suppressionlist@`, else
`delivered`, and `complained` after it for `complaint@`. Every event names the send's
`message-id` header (Mailgun's message id) and carries its user variables. Used by the local
simulator (local/simulator/providers/mailgun.py) and by a test caller's deployed sends
(`MailgunSimulation`, which the test-mode carrier asks). Pure but for the random event ids.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sendledger.providers.mailgun.events import MESSAGE_ID_VARIABLE, TAG
from sendledger.providers.simulated.rules import MailboxKind, TimedRecord, mailbox_simulator_kind

if TYPE_CHECKING:
    from sendledger.domain.events import DeliveryEvent
    from sendledger.ports.providers import SimulatedSend


@dataclass(frozen=True)
class MailgunSend:
    """What Mailgun's events say about one accepted send."""

    to: str
    provider_id: str  # the `message-id` header, without brackets
    variables: dict[str, str]  # the `v:` user variables
    tags: list[str] = field(default_factory=list)
    subject: str = ""
    sender: str = ""

    def item(self, event: str, at: float, **extra: Any) -> dict[str, Any]:
        """One event item at epoch seconds `at`."""
        return {
            "event": event,
            "id": secrets.token_urlsafe(16),
            "timestamp": round(at, 6),
            "log-level": "error" if event == "failed" else "info",
            "recipient": self.to,
            "recipient-domain": self.to.rpartition("@")[2],
            "tags": list(self.tags),
            "campaigns": [],
            "user-variables": dict(self.variables),
            "flags": {"is-authenticated": True, "is-test-mode": False},
            "message": {
                "headers": {
                    "to": self.to,
                    "message-id": self.provider_id,
                    "from": self.sender,
                    "subject": self.subject,
                },
                "attachments": [],
                "size": 2048,
            },
            **extra,
        }


def mailgun_outcomes(send: MailgunSend, base: float) -> list[tuple[float, dict[str, Any]]]:
    """(seconds after the send, item) for what follows acceptance, by the rules."""
    kind = mailbox_simulator_kind(send.to)
    if kind is MailboxKind.BOUNCE:
        status = {"code": 550, "enhanced-code": "5.1.1", "message": "5.1.1 user unknown", "attempt-no": 1}
        failed = send.item("failed", base + 2.6, severity="permanent", reason="bounce", **{"delivery-status": status})
        return [(2.6, failed)]
    if kind is MailboxKind.SUPPRESSIONLIST:
        status = {"code": 605, "description": "Not delivering to previously bounced address", "attempt-no": 1}
        failed = send.item(
            "failed", base + 0.3, severity="permanent", reason="suppress-bounce", **{"delivery-status": status}
        )
        return [(0.3, failed)]
    delivered_status = {"code": 250, "message": "OK", "attempt-no": 1}
    events = [(1.5, send.item("delivered", base + 1.5, **{"delivery-status": delivered_status}))]
    if kind is MailboxKind.COMPLAINT:
        events.append((3.0, send.item("complained", base + 3.0)))
    return events


def mailgun_events(send: MailgunSend, sent_at: datetime) -> list[TimedRecord]:
    """Every event of one accepted send (`accepted` first), each with the time it happens."""
    base = sent_at.timestamp()
    timed = [(0.0, send.item("accepted", base)), *mailgun_outcomes(send, base)]
    return [(datetime.fromtimestamp(base + offset, UTC), item) for offset, item in timed]


def clamp_timestamp(record: dict[str, Any], at: datetime, now: datetime) -> dict[str, Any]:
    """An event cannot be newer than its emission (a deployed send emits all of them at once)."""
    return record if at <= now else {**record, "timestamp": round(now.timestamp(), 6)}


@dataclass(frozen=True)
class MailgunSimulation:
    """Mailgun for a test caller: its events, each as the verified webhook intake queues it."""

    sender_email: str

    def events(self, send: SimulatedSend) -> list[str]:
        from sendledger.providers.mailgun.webhook import queued_bodies

        # The simulated id stands where Mailgun's goes: the `message-id` header every event names.
        variables = {MESSAGE_ID_VARIABLE: send.message_id}
        mailed = MailgunSend(send.to, send.provider_message_id, variables, [TAG], send.subject, self.sender_email)
        timed = mailgun_events(mailed, send.at)
        return [body for at, record in timed for body in queued_bodies(clamp_timestamp(record, at, send.at))]

    def parse(self, body: str) -> list[DeliveryEvent]:
        from sendledger.providers.mailgun.events import parse_queued

        return parse_queued(body)
