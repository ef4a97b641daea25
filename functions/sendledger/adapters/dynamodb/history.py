"""History entries as write-once attributes of the item whose state they explain."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, Update
from sendledger.adapters.dynamodb.keys import (
    HISTORY_PREFIX,
    RECEIPT_PK_PREFIX,
    RECEIPT_SK,
    entry_key,
    history_attribute,
)
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# An entry's JSON fields. One-letter names: every entry is billed by the byte on each write of
# its item, and an item past 1 KB costs another write unit on every write that touches it.
TYPE, STATE, EVIDENCE, AT, STEP = "t", "s", "e", "a", "p"


# An event id that starts with its receipt's provider message id is stored without it.
EVENT_ID, EVENT_REF = "event_id", "event_ref"


def encoded(entry: HistoryEntry, derived_from: str | None = None, within: str | None = None) -> tuple[str, str]:
    """(attribute name, JSON value). `derived_from` makes the name deterministic (events).

    An act's key already holds its time and step, so only an event's entry stores them (`at`
    as epoch milliseconds). `within`: the provider message id the item is known to hold, so
    an event id that starts with it keeps only the rest.
    """
    body: dict[str, Any] = {TYPE: entry.type.value}
    if entry.evidence:
        body[EVIDENCE] = _relative(entry.evidence, within)
    if entry.state is not None:
        body[STATE] = entry.state.value
    if derived_from is not None:
        body[AT] = epoch_millis(entry.at)
        if entry.step:
            body[STEP] = entry.step
    name = history_attribute(entry_key(entry.at, entry.step, derived_from))
    return name, json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)


def epoch_millis(at: datetime) -> int:
    """Whole milliseconds, truncated as `iso` truncates (integer arithmetic: no float rounding)."""
    return (at.astimezone(UTC) - EPOCH) // timedelta(milliseconds=1)


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def event_attribute(dedupe_key: str) -> str:
    """The attribute of a delivery event's entry: the same event always names the same one."""
    return history_attribute(entry_key(datetime.min, 0, derived_from=dedupe_key))


def append(update: Update, entry: HistoryEntry, derived_from: str | None = None, within: str | None = None) -> Update:
    return update.append_entry(*encoded(entry, derived_from, within))


def provider_message_id_of(item: Item) -> str | None:
    """The provider message id an item holds: its attribute, or an SMS receipt's key."""
    if "provider_message_id" in item:
        return str(item["provider_message_id"]["S"])
    if item.get("sk", {}).get("S") == RECEIPT_SK:
        return str(item["pk"]["S"]).removeprefix(RECEIPT_PK_PREFIX)
    return None


def _relative(evidence: dict[str, Any], within: str | None) -> dict[str, Any]:
    event_id = evidence.get(EVENT_ID)
    if within is None or not isinstance(event_id, str) or not event_id.startswith(f"{within}#"):
        return evidence
    rest = {name: value for name, value in evidence.items() if name != EVENT_ID}
    return {**rest, EVENT_REF: event_id.removeprefix(f"{within}#")}


def _absolute(evidence: dict[str, Any], item: Item) -> dict[str, Any]:
    if EVENT_REF not in evidence:
        return evidence
    rest = {name: value for name, value in evidence.items() if name != EVENT_REF}
    return {**rest, EVENT_ID: f"{provider_message_id_of(item)}#{evidence[EVENT_REF]}"}


def entries_of(item: Item) -> list[tuple[str, HistoryEntry]]:
    """(entry key, entry) of every history attribute on a raw item."""
    found = []
    for name, value in item.items():
        if name.startswith(HISTORY_PREFIX):
            key, body = name.removeprefix(HISTORY_PREFIX), json.loads(value["S"])
            at, step = key_time(key) if AT not in body else (from_millis(body[AT]), int(body.get(STEP, 0)))
            entry = HistoryEntry(
                at=at,
                type=HistoryType(body[TYPE]),
                state=MessageState(body[STATE]) if body.get(STATE) else None,
                evidence=_absolute(body.get(EVIDENCE, {}), item),
                step=step,
            )
            found.append((key, entry))
    return found


def key_time(key: str) -> tuple[datetime, int]:
    """(time, step) of an act's entry key `<epoch ms>.<step>.<random>`."""
    millis, step, _ = key.split(".", 2)
    return from_millis(int(millis)), int(step)


def in_order(pairs: list[tuple[str, HistoryEntry]]) -> list[HistoryEntry]:
    """Time order; within one millisecond the step (an intent before its outcome), then the key."""
    return [entry for _, entry in sorted(pairs, key=lambda pair: (pair[1].at, pair[1].step, pair[0]))]
