"""What simulated Infrai answers to `GET …/get/{id}`: the statuses a record reaches over time.

Infrai pushes nothing, so there are no events to put anywhere (`InfraiSimulation` reports none):
its status is asked. The course is
the rules' (rules.py): `queued`, then for email `bounced` (bounce@, suppressionlist@),
`delivered` then `complained` (complaint@) or `delivered`; for SMS `delivered` or `failed` by
the fictional number, or `sent` and nothing more (90-99). Used by the local simulator
(local/simulator/providers/infrai.py) and by the Infrai status lane for a test caller's messages
(lane.py), which never asks Infrai about them. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sendledger.domain.events import MalformedEvent
from sendledger.providers.simulated.rules import (
    NO_STATUS,
    SMS_SUCCESS_RESPONSE,
    MailboxKind,
    mailbox_simulator_kind,
    sms_outcome,
)

if TYPE_CHECKING:
    from sendledger.domain.events import DeliveryEvent
    from sendledger.ports.providers import SimulatedSend

Timeline = list[tuple[datetime, str]]  # (from when, status), in order


def infrai_timeline(channel: str, to: str, sent_at: datetime) -> Timeline:
    """The statuses a send to `to` reaches, from `sent_at` on."""

    def after(seconds: float, status: str) -> tuple[datetime, str]:
        return sent_at + timedelta(seconds=seconds), status

    start = [(sent_at, "queued")]
    if channel == "sms":
        outcome = sms_outcome(to)
        if outcome == NO_STATUS:
            return [*start, after(0.5, "sent")]  # no status ever beyond sent
        return [*start, after(1.5, "delivered" if outcome == SMS_SUCCESS_RESPONSE else "failed")]
    kind = mailbox_simulator_kind(to)
    if kind is MailboxKind.BOUNCE:
        return [*start, after(2.6, "bounced")]
    if kind is MailboxKind.SUPPRESSIONLIST:
        return [*start, after(0.3, "bounced")]
    if kind is MailboxKind.COMPLAINT:
        return [*start, after(1.5, "delivered"), after(3.0, "complained")]
    return [*start, after(1.5, "delivered")]


def status_at(timeline: Timeline, now: datetime) -> tuple[str, datetime]:
    """(the status reached by `now`, when it was reached); the first one before it starts."""
    reached = [(at, status) for at, status in timeline if at <= now] or timeline[:1]
    at, status = reached[-1]
    return status, at


class InfraiSimulation:
    """Infrai for a test caller: nothing pushed (its status lane answers from the rules)."""

    def events(self, send: SimulatedSend) -> list[str]:
        return []

    def parse(self, body: str) -> list[DeliveryEvent]:
        raise MalformedEvent("not a test outcome: Infrai pushes no events")
