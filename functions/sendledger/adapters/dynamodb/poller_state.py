"""Source watermarks and the SMS log cursor: written by the poller only, never by a send.

Low-level, through the ledger's expression builder: the send path reads the watermark too
(recent_watermark), and the poller writes the watermarks and the log cursor in every cycle, its
first included, where PynamoDB's import and its models' build cost about 19 ms of the cold
start (benchmarks/README.md, PynamoDB). The attribute names are the WatermarkItem model's
(models.py; tests/integration/test_ledger_models.py reads what this adapter writes).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime

from sendledger.adapters.dynamodb.expressions import Update
from sendledger.adapters.dynamodb.keys import WATERMARK_SK, watermark_pk
from sendledger.adapters.dynamodb.table import ConditionFailed, Table
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.watermarks import WatermarkCache


@dataclass
class PollerState:
    table: Table
    cache: WatermarkCache = field(default_factory=WatermarkCache)

    def watermark(self, source: str) -> datetime | None:
        item = self.table.get(watermark_pk(source), WATERMARK_SK)
        value = item.get("watermark", {}).get("S") if item else None
        return parse_iso(value) if value else None

    def recent_watermark(self, source: str, now: datetime, *, read: bool = True) -> datetime | None:
        """The watermark as read at most the cache's age ago (per warm container; see
        domain/watermarks.py for why that is safe).

        `read=False` never reads: None when nothing recent is cached (an optimistic first try
        then asserts the strictest condition, no earlier send at all).
        """
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
        moment = iso(at)
        update = Update().set("watermark", moment).set("updated_at", moment)
        update.when(update.absent("watermark") | update.below("watermark", moment))
        with contextlib.suppress(ConditionFailed):  # never backwards (an older cycle finishing late)
            self.table.update(watermark_pk(source), WATERMARK_SK, update)

    def cursor(self, source: str) -> str | None:
        item = self.table.get(watermark_pk(source), WATERMARK_SK)
        value = item.get("cursor", {}).get("S") if item else None
        return value or None

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None:
        update = Update().set("cursor", cursor).set("updated_at", iso(now))
        update.when(update.absent("cursor") if previous is None else update.equals("cursor", previous))
        try:
            self.table.update(watermark_pk(source), WATERMARK_SK, update)
        except ConditionFailed:
            raise DependencyUnavailable("log cursor moved concurrently", retry_after_seconds=1) from None
