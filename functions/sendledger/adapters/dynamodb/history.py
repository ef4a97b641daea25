"""History entries as write-once attributes of the item whose state they explain."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, Update
from sendledger.adapters.dynamodb.keys import HISTORY_PREFIX, entry_key, history_attribute
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState


def encoded(entry: HistoryEntry, derived_from: str | None = None) -> tuple[str, str]:
    """(attribute name, JSON value). `derived_from` makes the name deterministic (events).

    An act's key already holds its time and step, so only an event's entry stores them.
    """
    body: dict[str, Any] = {"type": entry.type.value, "evidence": entry.evidence}
    if entry.state is not None:
        body["state"] = entry.state.value
    if derived_from is not None:
        body["at"] = iso(entry.at)
        if entry.step:
            body["step"] = entry.step
    name = history_attribute(entry_key(entry.at, entry.step, derived_from))
    return name, json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)


def event_attribute(dedupe_key: str) -> str:
    """The attribute of a delivery event's entry: the same event always names the same one."""
    return history_attribute(entry_key(datetime.min, 0, derived_from=dedupe_key))


def append(update: Update, entry: HistoryEntry, derived_from: str | None = None) -> Update:
    return update.append_entry(*encoded(entry, derived_from))


def entries_of(item: Item) -> list[tuple[str, HistoryEntry]]:
    """(entry key, entry) of every history attribute on a raw item."""
    found = []
    for name, value in item.items():
        if name.startswith(HISTORY_PREFIX):
            key, body = name.removeprefix(HISTORY_PREFIX), json.loads(value["S"])
            at, step = key_time(key) if "at" not in body else (parse_iso(body["at"]), int(body.get("step", 0)))
            entry = HistoryEntry(
                at=at,
                type=HistoryType(body["type"]),
                state=MessageState(body["state"]) if body.get("state") else None,
                evidence=body.get("evidence", {}),
                step=step,
            )
            found.append((key, entry))
    return found


def key_time(key: str) -> tuple[datetime, int]:
    """(time, step) of an act's entry key `<epoch ms>.<step>.<random>`."""
    millis, step, _ = key.split(".", 2)
    return datetime.fromtimestamp(int(millis) / 1000, tz=UTC), int(step)


def in_order(pairs: list[tuple[str, HistoryEntry]]) -> list[HistoryEntry]:
    """Time order; within one millisecond the step (an intent before its outcome), then the key."""
    return [entry for _, entry in sorted(pairs, key=lambda pair: (pair[1].at, pair[1].step, pair[0]))]
