"""SMS segments counted per caller and UTC day: written off the send path (the publisher counts
the ledger's stream), read by the send path through a short cache (usecases/sms_guard.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from sendledger.domain.callers import CallerId


class SmsUsage(Protocol):
    def segments_on(self, caller_id: CallerId, day: str) -> int:
        """Segments counted for the caller on `day` (YYYY-MM-DD, UTC); 0 when none."""
        ...

    def add(self, counted: Mapping[tuple[CallerId, str], int]) -> None:
        """Add segments per (caller, day): one write per pair, whatever the number of messages."""
        ...


class SmsUsageInMemory:
    """Counts held by this object alone (tools and tests without a table)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[CallerId, str], int] = {}

    def segments_on(self, caller_id: CallerId, day: str) -> int:
        return self.counts.get((caller_id, day), 0)

    def add(self, counted: Mapping[tuple[CallerId, str], int]) -> None:
        for pair, segments in counted.items():
            self.counts[pair] = self.counts.get(pair, 0) + segments
