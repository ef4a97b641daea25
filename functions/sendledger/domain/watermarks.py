"""A per-container cache of source watermarks, and why a stale one is safe.

Watermarks only move forward, so a cached value is at most the cache's age older than the
truth, and an older watermark only makes the stale-eligibility guard more cautious (more sends
look `eligible_stale`, none looks `eligible` wrongly). In exchange no send reads or conditions
on the one item every sender would share.

The same argument lets a send's optimistic first try assert its condition against the last
watermark the container read, however old (`last`): a condition "the recipient's last send is
no newer than that watermark minus the grace" only gets stricter as the value ages, and a send
it turns away takes the exact path, which reads a recent one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

WATERMARK_CACHE = timedelta(seconds=30)


@dataclass
class WatermarkCache:
    ttl: timedelta = WATERMARK_CACHE
    _entries: dict[str, tuple[datetime, datetime | None]] = field(default_factory=dict)

    def get(self, source: str, now: datetime) -> tuple[bool, datetime | None]:
        """(fresh enough, the watermark read then); a clock that went back counts as stale."""
        entry = self._entries.get(source)
        if entry is not None and timedelta(0) <= now - entry[0] < self.ttl:
            return True, entry[1]
        return False, None

    def last(self, source: str) -> tuple[bool, datetime | None]:
        """(ever read, the watermark read last), however long ago that was."""
        entry = self._entries.get(source)
        return (True, entry[1]) if entry is not None else (False, None)

    def put(self, source: str, now: datetime, value: datetime | None) -> None:
        self._entries[source] = (now, value)
