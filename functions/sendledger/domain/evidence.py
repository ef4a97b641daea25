"""What a delivery event records: its history entries and the reason it gives a message."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from sendledger.domain.clock import iso
from sendledger.domain.events import DeliveryEvent, failure_reason
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState

EVENT_STEP = 2  # after the intent (0) and the provider outcome (1) of the same millisecond
# Every event's evidence names the provider's own event: its name (`provider_event`) and, when
# the provider's id is not the dedupe id itself, its id (`provider_event_id`).
PROVIDER_EVENT, PROVIDER_EVENT_ID = "provider_event", "provider_event_id"
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
    # The entry's type names the kind, its receipt the provider message id, its message the
    # provider and the recipient: an event's entry stores only what the event alone knows.
    evidence: dict[str, Any] = {
        "event_id": event.event_id,
        "event_at": iso(event.occurred_at),
        "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
        **{name: value for name, value in event.evidence.items() if not _implied(name, value, event)},
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
        return failure_reason(event.kind, f"{event.bounce_type}/{event.bounce_subtype}")
    return failure_reason(event.kind, event.provider_response)


def _implied(name: str, value: Any, event: DeliveryEvent) -> bool:
    """The provider's event name when the kind says it already (some providers name their events so)."""
    return name == PROVIDER_EVENT and value == event.kind.value


def as_read(
    entry: HistoryEntry, *, provider: str, source: str, recipient: str, provider_message_id: str | None
) -> HistoryEntry:
    """An event's entry as readers see it: what it leaves to its receipt and message, added back.

    Every one names the provider that carried the message, the provider's own name of the event
    and its own id (entries written before `provider_event` existed kept it as `<source>_event`).
    """
    if not entry.type.value.startswith("event:"):
        return entry
    kind = entry.type.value.removeprefix("event:")
    implied: dict[str, Any] = {"provider": provider, "event_source": source, "recipient": recipient}
    if provider_message_id:
        implied["provider_message_id"] = provider_message_id
    evidence = {**implied, **entry.evidence}
    evidence.setdefault(PROVIDER_EVENT, entry.evidence.get(f"{source}_event", kind))
    evidence.setdefault(PROVIDER_EVENT_ID, evidence.get("event_id"))
    return replace(entry, evidence=evidence)
