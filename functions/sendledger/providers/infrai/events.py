"""A message record of Infrai's `GET …/get/{id}` → the delivery event its status proves (pure).

Infrai pushes nothing: the poller asks (lane.py) and each status it sees once is one event, so
the dedupe id is the Infrai message id and the status. What the statuses mean is the assumption
table's (assumptions.py). The record's other fields (addresses, texts) never reach the event.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sendledger.domain.clock import parse_iso
from sendledger.domain.events import DeliveryEvent, EventKind, MalformedEvent
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value
from sendledger.providers.infrai import SOURCE
from sendledger.providers.infrai.assumptions import ASSUMED, SMS_FAILURE, Status


@value
class Record:
    provider_message_id: str
    status: str  # as Infrai spells it, lower case
    meaning: Status | None  # None: a status the table does not list
    at: datetime | None  # when the status was reached, if the record says


def read_record(document: Any) -> Record:
    if not isinstance(document, Mapping):
        raise MalformedEvent("Infrai record is not a JSON object")
    provider_id, status = document.get(ASSUMED.id_field), document.get(ASSUMED.status_field)
    if not isinstance(provider_id, str) or not provider_id or not isinstance(status, str) or not status:
        raise MalformedEvent("Infrai record has no id or status")
    status = status.strip().lower()
    return Record(provider_id, status, ASSUMED.statuses.get(status), _time(document.get(ASSUMED.time_field)))


def _time(raw: Any) -> datetime | None:
    try:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return datetime.fromtimestamp(raw, UTC)
        if isinstance(raw, str) and raw:
            return parse_iso(raw)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def status_event(
    record: Record, *, message_id: str, recipient_key: str, channel: Channel, seen_at: datetime
) -> DeliveryEvent | None:
    """The event a record's status proves; None while it proves nothing new (in flight, unknown)."""
    meaning = record.meaning
    if meaning is None or meaning.kind is None:
        return None
    kind, verdict = meaning.kind, meaning.verdict
    if channel is Channel.SMS:
        kind = ASSUMED.sms_kinds.get(kind, kind)
        verdict = SMS_FAILURE if kind is EventKind.SMS_FAILURE else None
    return DeliveryEvent(
        source=SOURCE,
        event_id=f"{record.provider_message_id}#{record.status}",
        kind=kind,
        occurred_at=min(record.at, seen_at) if record.at else seen_at,  # not later than we saw it
        recipient_key=recipient_key,
        message_id=message_id,
        provider_message_id=record.provider_message_id,
        provider_response=record.status,
        evidence={"provider_event": record.status},
        verdict=verdict,
    )
