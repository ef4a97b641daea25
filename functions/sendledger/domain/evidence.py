"""What a delivery event records: its history entries and the reason it gives a message."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from sendledger.domain.clock import iso
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState

EVENT_STEP = 2  # after the intent (0) and the provider outcome (1) of the same millisecond
# The entry's type names the source and kind, its receipt the provider's message id and its
# message the recipient: an event's entry stores only what the event alone knows.
ENTRY_IMPLIED = frozenset({"ses_event_type"})
FAILED_FOR_GOOD = frozenset({MessageState.BOUNCED, MessageState.COMPLAINED, MessageState.FAILED, MessageState.REJECTED})


def event_entry(
    event: DeliveryEvent,
    target: MessageState | None,
    applied: bool,
    prior_state: str | None,
    now: datetime,
    suppressing: bool,
) -> HistoryEntry:
    """The event's entry on its receipt; `applied` False: recorded, the state kept (`prior_state`)."""
    evidence: dict[str, Any] = {
        "event_id": event.event_id,
        "event_at": iso(event.occurred_at),
        "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
        **{name: value for name, value in event.evidence.items() if name not in ENTRY_IMPLIED},
    }
    if not applied and target is not None:
        evidence["state_unchanged"] = prior_state
        evidence["would_be"] = target.value
    if suppressing:
        evidence["suppressed_recipient"] = True
    return HistoryEntry(
        at=now,
        type=HistoryType.of_event(event.kind.value),
        state=target if applied else None,
        evidence=evidence,
        step=EVENT_STEP,
    )


def suppression_entry(event: DeliveryEvent, reason: str, now: datetime) -> HistoryEntry:
    """The recipient's entry when an event suppresses it."""
    return HistoryEntry(
        at=now,
        type=HistoryType.SUPPRESSED,
        evidence={
            "source": event.source,
            "event_id": event.event_id,
            "event_at": iso(event.occurred_at),
            "reason": reason,
            "actor": "sendledger-events",
        },
    )


def reason_of(event: DeliveryEvent) -> str:
    if event.bounce_type:
        return f"bounce: {event.bounce_type}/{event.bounce_subtype}"
    if event.provider_response:
        return f"{event.kind.value}: {event.provider_response}"
    return event.kind.value


def as_read(entry: HistoryEntry, *, source: str, recipient: str, provider_message_id: str | None) -> HistoryEntry:
    """An event's entry as readers see it: what it leaves to its receipt and message, added back."""
    if not entry.type.value.startswith("event:"):
        return entry
    implied: dict[str, Any] = {"event_source": source, "recipient": recipient}
    if provider_message_id:
        implied["provider_message_id"] = provider_message_id
    evidence = {**implied, **entry.evidence}
    if source == "ses":
        evidence.setdefault("ses_event_type", entry.type.value.removeprefix("event:"))
    return replace(entry, evidence=evidence)
