"""Source watermarks and the SMS log cursor (written by the poller only, never by a send)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.watermarks import WatermarkCache
from tests.unit.fakes.history import ms
from tests.unit.fakes.state import LedgerState


@dataclass
class FakePollerState:
    db: LedgerState
    cache: WatermarkCache = field(default_factory=WatermarkCache)  # per warm container, as deployed
    reads: int = 0  # watermark reads (the send path's optimistic first try reads none)

    def watermark(self, source: str) -> datetime | None:
        self.reads += 1
        return self.db.watermarks.get(source)

    def recent_watermark(self, source: str, now: datetime, *, read: bool = True) -> datetime | None:
        fresh, value = self.cache.get(source, now)
        if fresh or not read:
            return value
        value = self.watermark(source)
        self.cache.put(source, now, value)
        return value

    def known_watermark(self, source: str) -> datetime | None:
        """The last watermark read, however old (see domain/watermarks.py); None when never read."""
        return self.cache.last(source)[1]

    def set_watermark(self, source: str, at: datetime) -> None:
        with self.db.lock:
            current = self.db.watermarks.get(source)
            if current is None or current < ms(at):  # never backwards (an older cycle finishing late)
                self.db.watermarks[source] = ms(at)

    def cursor(self, source: str) -> str | None:
        return self.db.cursors.get(source)

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None:
        with self.db.lock:
            if self.db.cursors.get(source) != previous:
                raise DependencyUnavailable("log cursor moved concurrently", retry_after_seconds=1)
            self.db.cursors[source] = cursor
