"""History entries and times as the ledger table keeps them.

The table stores times as ISO strings with milliseconds and entries as JSON, and compares the
strings in its conditions; the fakes store and compare what a read of the table would give back.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from sendledger.domain.messages import HistoryEntry

# Ties within one (at, step) are broken by the order of the writes here; the table breaks them by
# the entry's attribute name (random for an act, a hash for an event): unordered on both sides.
_order = itertools.count()


def ms(moment: datetime) -> datetime:
    """`moment` as the table keeps it (ISO, milliseconds)."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def stored(entry: HistoryEntry) -> HistoryEntry:
    """The entry as read back: `at` in milliseconds, evidence through JSON."""
    evidence = json.loads(json.dumps(entry.evidence, sort_keys=True, default=str))
    return replace(entry, at=ms(entry.at), evidence=evidence)


@dataclass
class History:
    """Append-only: entries are only ever added; an event's entry (named by its dedupe key) once."""

    _entries: list[tuple[int, HistoryEntry]] = field(default_factory=list)
    _events: set[str] = field(default_factory=set)

    def append(self, entry: HistoryEntry, derived_from: str | None = None) -> None:
        if derived_from is not None:
            if derived_from in self._events:
                raise ValueError(f"history already holds the entry of {derived_from}")
            self._events.add(derived_from)
        self._entries.append((next(_order), stored(entry)))

    def mapped(self, read: Callable[[HistoryEntry], HistoryEntry]) -> History:
        """The same entries, in the same write order, as `read` shows them."""
        shown = History(_events=set(self._events))
        shown._entries = [(order, read(entry)) for order, entry in self._entries]
        return shown

    def has_event(self, dedupe_key: str) -> bool:
        return dedupe_key in self._events

    def entries(self) -> list[HistoryEntry]:
        return in_order(self)

    def __len__(self) -> int:
        return len(self._entries)


def in_order(*histories: History) -> list[HistoryEntry]:
    """Time order; within one millisecond the step (an intent before its outcome), then the write order."""
    pairs = [pair for history in histories for pair in history._entries]
    return [entry for _, entry in sorted(pairs, key=lambda pair: (pair[1].at, pair[1].step, pair[0]))]
