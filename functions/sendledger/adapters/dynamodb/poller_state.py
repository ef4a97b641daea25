"""Source watermarks and the SMS log cursor: written by the poller only, never by a send.

The poller's reads and writes go through the watermark's model (modelled.py). The watermark's
read stays low-level: the send path reads it too (recent_watermark), and the api must not pay
PynamoDB's import on its cold start (benchmarks/README.md, PynamoDB).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime

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
        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import WatermarkItem as Item

        moment = iso(at)
        actions = [Item.watermark.set(moment), Item.updated_at.set(moment)]
        never_backwards = Item.watermark.does_not_exist() | (Item.watermark < moment)
        with contextlib.suppress(ConditionFailed):  # never backwards (an older cycle finishing late)
            modelled.update(self.table, watermark_pk(source), WATERMARK_SK, actions, never_backwards)

    def cursor(self, source: str) -> str | None:
        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import WatermarkItem

        stored = modelled.read(WatermarkItem, self.table.get(watermark_pk(source), WATERMARK_SK))
        return stored.cursor if stored is not None and stored.cursor else None

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None:
        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import WatermarkItem as Item

        actions = [Item.cursor.set(cursor), Item.updated_at.set(iso(now))]
        unmoved = Item.cursor.does_not_exist() if previous is None else Item.cursor == previous
        try:
            modelled.update(self.table, watermark_pk(source), WATERMARK_SK, actions, unmoved)
        except ConditionFailed:
            raise DependencyUnavailable("log cursor moved concurrently", retry_after_seconds=1) from None
