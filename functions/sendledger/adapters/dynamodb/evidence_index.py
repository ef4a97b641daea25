"""The evidence index: one caller's message items by creation time, write-sharded per UTC day.

A message's entry sits in partition `<owner>#<day>#<shard>` (keys.evidence_partition: the shard
from its message id), so one caller's sends spread over EVIDENCE_SHARDS partition keys instead
of one that would take every send of a day. A window is read day by day; each day's shards
(and the unsharded partition entries written before sharding used) are queried in parallel
and merged back into one order: creation time, then message id. Each shard is read lazily,
a page at a time, so a page of the export reads little more than it returns.

A cursor names the last position handed out; the next page starts right after it in that
order, in every shard (an entry in the cursor's own millisecond is compared by id), so two
messages created in the same millisecond are neither skipped nor repeated.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sendledger import names
from sendledger.adapters.dynamodb.keys import (
    EVIDENCE_PARTITIONS_PER_DAY,
    EVIDENCE_SHARDS,
    MESSAGE_PK_PREFIX,
    evidence_partitions,
)
from sendledger.adapters.dynamodb.table import Table, dependency_guard
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.export_window import Position, Window
from sendledger.ports.messages import CreatedPage

PARTITION = names.EVIDENCE_INDEX_PARTITION_KEY
CREATED = names.EVIDENCE_INDEX_SORT_KEY
MAX_PAGE = 1000  # the most one Query is asked for


@cache
def _pool() -> ThreadPoolExecutor:
    """Per container: one thread per partition of a day (the export is the only caller)."""
    return ThreadPoolExecutor(max_workers=EVIDENCE_PARTITIONS_PER_DAY, thread_name_prefix="evidence")


def created_in(table: Table, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
    found: list[Position] = []
    days = window.days(after.created_at if after else None)
    last = window.until - timedelta(milliseconds=1)  # BETWEEN is inclusive; the window's end is not
    # Each shard holds about 1/EVIDENCE_SHARDS of a day: ask each for a little more than its share.
    chunk = min(MAX_PAGE, math.ceil(limit / EVIDENCE_SHARDS) + 8)
    for index, day in enumerate(days):
        low = max(window.since, day, after.created_at if after else window.since)
        high = min(last, day + timedelta(days=1) - timedelta(milliseconds=1))
        shards = [_Shard(table, partition, low, high, chunk) for partition in evidence_partitions(owner, day)]
        for shard in shards:
            shard.prefetch()
        for position in heapq.merge(*shards, key=_order):
            if after is not None and _order(position) <= _order(after):
                continue
            found.append(position)
            if len(found) >= limit:
                # Full: more may follow in this day's shards or a later day (at worst an empty page).
                return CreatedPage(found, any(shard.more for shard in shards) or index < len(days) - 1)
    return CreatedPage(found, False)


def _order(position: Position) -> tuple[datetime, str]:
    return position.created_at, position.message_id


class _Shard:
    """One partition's entries in [low, high], in (creation time, message id) order, a page at a time."""

    def __init__(self, table: Table, partition: str, low: datetime, high: datetime, chunk: int) -> None:
        self.table = table
        self.request: dict[str, Any] = {
            "TableName": table.name,
            "IndexName": names.EVIDENCE_INDEX,
            "KeyConditionExpression": "#p = :p AND #c BETWEEN :lo AND :hi",
            "ExpressionAttributeNames": {"#p": PARTITION, "#c": CREATED},
            "ExpressionAttributeValues": {":p": {"S": partition}, ":lo": {"S": iso(low)}, ":hi": {"S": iso(high)}},
            "Limit": chunk,
        }
        self.buffer: list[Position] = []
        self.pending: Future[dict[str, Any]] | None = None
        self.exhausted = False
        self.yielded_all = False

    @property
    def more(self) -> bool:
        """Entries left that were not handed out (read or still to be read)."""
        return not self.yielded_all

    def prefetch(self) -> None:
        if not self.exhausted and self.pending is None:
            self.pending = _pool().submit(self._query)

    def _query(self) -> dict[str, Any]:
        with dependency_guard():
            page: dict[str, Any] = self.table.client.query(**self.request)
        return page

    def _fill(self) -> None:
        self.prefetch()
        assert self.pending is not None
        page, self.pending = self.pending.result(), None
        self.buffer += [_position(item) for item in page.get("Items", [])]
        # The index orders one partition by creation time alone; within a millisecond, by id.
        self.buffer.sort(key=_order)
        following = page.get("LastEvaluatedKey")
        if following:
            self.request["ExclusiveStartKey"] = following
        else:
            self.exhausted = True

    def __iter__(self) -> Iterator[Position]:
        while True:
            if not self.exhausted and (not self.buffer or self.buffer[-1].created_at == self.buffer[0].created_at):
                self._fill()  # an entry of the buffer's last millisecond may be on the next page
                continue
            if not self.buffer:
                self.yielded_all = True
                return
            # Everything before the buffer's last millisecond is final; all of it once exhausted.
            last = self.buffer[-1].created_at
            safe = self.buffer if self.exhausted else [p for p in self.buffer if p.created_at < last]
            yield from safe
            self.buffer = self.buffer[len(safe) :]
            if self.exhausted and not self.buffer:
                self.yielded_all = True
                return


def _position(item: dict[str, Any]) -> Position:
    return Position(parse_iso(str(item[CREATED]["S"])), str(item["pk"]["S"]).removeprefix(MESSAGE_PK_PREFIX))
