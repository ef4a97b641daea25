"""Caller settings in memory, cached per "container" as DynamoCallerSettings caches them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sendledger.domain.caller_settings import CallerSettings, CallerSettingsCache, SettingsChangeEntry
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, SystemClock
from tests.unit.fakes.state import LedgerState


@dataclass
class FakeCallerSettings:
    db: LedgerState
    clock: Clock = field(default_factory=SystemClock)
    cache: CallerSettingsCache = field(default_factory=CallerSettingsCache)  # per warm container, as deployed
    reads: int = 0  # item reads (a cached answer reads none)

    def get(self, caller_id: CallerId) -> CallerSettings:
        now = self.clock.now()
        cached = self.cache.get(caller_id, now)
        if cached is not None:
            return cached
        self.reads += 1
        found = self.db.callers.get(caller_id) or CallerSettings(caller_id)
        self.cache.put(found, now)
        return found

    def put(self, settings: CallerSettings, change: SettingsChangeEntry | None = None) -> CallerSettings:
        with self.db.lock:
            previous = self.db.callers.get(settings.caller_id)
            history = previous.history if previous else ()
            stored = replace(
                settings,
                version=(previous.version if previous else 0) + 1,
                history=(*history, change) if change else history,
            )
            self.db.callers[settings.caller_id] = stored
        self.cache.put(stored, self.clock.now())
        return stored

    def container(self) -> FakeCallerSettings:
        """Another container over the same items: its own, empty cache."""
        return FakeCallerSettings(self.db, self.clock)
