"""The sparse due-work index: items the poller must revisit, by kind and due time.

Its partition key is `<kind>#<shard>` (keys.due_shard): every send in flight sits in the index
until its outcome, so one value per kind would be a partition every send writes.

A read is one Scan of the whole index while the index is small (it usually is: the index holds
only work in progress), filtered to the kind and due time: one request instead of a query per
shard, and no more read units than those queries' minimum charges (SCAN_ITEMS). A poll cycle
first asks one such scan whether anything is due at all (`nothing_due`): on a quiet deployment
that is its only read of the index. A scan that finds the index larger stops after its first
page, and the reads go to the shards instead, each asked at once (a poll cycle's five passes and
backlog count: 96 queries, about six round trips), until a scan is tried again RESCAN_AFTER
reads later.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from sendledger import names
from sendledger.adapters.dynamodb.expressions import Item, Update
from sendledger.adapters.dynamodb.keys import (
    DUE_SHARDS,
    MESSAGE_PK_PREFIX,
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RECEIPT_PK_PREFIX,
    RECEIPT_SK,
    due_shard,
    message_pk,
    receipt_pk,
)
from sendledger.adapters.dynamodb.sms_receipts import ESCALATES
from sendledger.adapters.dynamodb.states import DUE_KIND
from sendledger.adapters.dynamodb.table import ConditionFailed, Table, dependency_guard
from sendledger.domain.escalation import Escalation
from sendledger.domain.messages import DueKind
from sendledger.ports.ingestion import DueItem

T = TypeVar("T")

# A scan evaluates at most this many index items (~250 B each projected): read whole, an index this
# small costs about the 16 queries' minimum charges (0.5 RRU each), in one request instead of 16.
SCAN_ITEMS = 200
RESCAN_AFTER = 60  # reads (about ten poll cycles) before a large index is scanned again


@cache
def _pool() -> ThreadPoolExecutor:
    """Per container: one thread per shard (the ledger client's pool holds a connection for each)."""
    return ThreadPoolExecutor(max_workers=DUE_SHARDS, thread_name_prefix="due-work")


def each_shard(kind: DueKind, ask: Callable[[str], T]) -> list[T]:
    """`ask` of every shard's partition of `kind`, all in flight at once; in shard order."""
    return list(_pool().map(ask, [f"{kind.value}#{shard}" for shard in range(DUE_SHARDS)]))


class DueWork:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._shard_reads_left = 0  # > 0: a scan found the index too large; reads until the next one

    def items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]:
        page = self._kind_scan(kind, until)
        raws = page.get("Items", []) if page is not None else self._shard_items(kind, until, limit)
        return sorted(map(_due_from, raws), key=lambda item: item.due_at)[:limit]

    def count(self, kind: DueKind) -> int:
        page = self._kind_scan(kind, None, count=True)
        return int(page.get("Count", 0)) if page is not None else sum(each_shard(kind, self._count))

    def clear(self, message_id: str, kind: DueKind, receipt_id: str | None = None, on_receipt: bool = False) -> None:
        if receipt_id:
            pk, sk = receipt_pk(receipt_id), RECEIPT_SK
        else:
            pk, sk = message_pk(message_id), MESSAGE_RECEIPT_SK if on_receipt else MESSAGE_SK
        update = Update().remove(DUE_KIND, names.DUE_WORK_INDEX_SORT_KEY)
        update.when(update.equals(DUE_KIND, due_shard(kind.value, receipt_id or message_id)))
        with contextlib.suppress(ConditionFailed):  # already moved on to other work
            self.table.update(pk, sk, update)

    def reschedule(self, message_id: str, kind: DueKind, due_at: datetime, was: DueKind | None = None) -> None:
        update = Update().set(names.DUE_WORK_INDEX_SORT_KEY, int(due_at.timestamp()))
        if was is not None and was is not kind:
            update.set(DUE_KIND, due_shard(kind.value, message_id))
        update.when(update.equals(DUE_KIND, due_shard((was or kind).value, message_id)))
        with contextlib.suppress(ConditionFailed):  # moved on to other work since
            self.table.update(message_pk(message_id), MESSAGE_SK, update)

    def _shard_items(self, kind: DueKind, until: datetime | None, limit: int) -> list[Item]:
        pages = each_shard(kind, lambda partition: self._query(partition, until, limit))
        return [raw for page in pages for raw in page]

    def _query(self, partition: str, until: datetime | None, limit: int) -> list[Item]:
        request = self._request(partition)
        if until is not None:
            request["KeyConditionExpression"] += " AND #a <= :a"
            request["ExpressionAttributeNames"]["#a"] = names.DUE_WORK_INDEX_SORT_KEY
            request["ExpressionAttributeValues"][":a"] = {"N": str(int(until.timestamp()))}
        items: list[Item] = []
        while len(items) < limit:
            request["Limit"] = min(100, limit - len(items))
            page = self._page(request)
            items += page.get("Items", [])
            if not page.get("LastEvaluatedKey"):
                break
        return items

    def _count(self, partition: str) -> int:
        request, total = {**self._request(partition), "Select": "COUNT"}, 0
        while True:
            page = self._page(request)
            total += int(page.get("Count", 0))
            if not page.get("LastEvaluatedKey"):
                return total

    def nothing_due(self, until: datetime) -> bool:
        due_or_unknown = "#a <= :a OR begins_with(#k, :u)"
        values = {":a": {"N": str(int(until.timestamp()))}, ":u": {"S": f"{DueKind.UNKNOWN.value}#"}}
        page = self._scan(due_or_unknown, values, count=True)
        return page is not None and int(page.get("Count", 0)) == 0

    def _kind_scan(self, kind: DueKind, until: datetime | None, count: bool = False) -> dict[str, Any] | None:
        """The index's items of `kind` (due by `until`) in one Scan; None: the index is too large for one."""
        values = {":k": {"S": f"{kind.value}#"}}
        if until is None:
            return self._scan("begins_with(#k, :k)", values, count)
        values[":a"] = {"N": str(int(until.timestamp()))}
        return self._scan("begins_with(#k, :k) AND #a <= :a", values, count)

    def _scan(self, matching: str, values: dict[str, Any], count: bool) -> dict[str, Any] | None:
        """The index's items `matching` (over #k, the kind and shard, and #a, the due time) in one
        Scan of the whole index; None: the index is larger than one scan reads (SCAN_ITEMS)."""
        if self._shard_reads_left > 0:
            self._shard_reads_left -= 1
            return None
        names_used = {"#k": DUE_KIND, "#a": names.DUE_WORK_INDEX_SORT_KEY}
        request: dict[str, Any] = {
            "TableName": self.table.name,
            "IndexName": names.DUE_WORK_INDEX,
            "Limit": SCAN_ITEMS,
            "FilterExpression": matching,
            "ExpressionAttributeNames": {
                placeholder: name for placeholder, name in names_used.items() if placeholder in matching
            },
            "ExpressionAttributeValues": values,
        }
        if count:
            request["Select"] = "COUNT"
        with dependency_guard():
            page: dict[str, Any] = self.table.client.scan(**request)
        if page.get("LastEvaluatedKey"):
            self._shard_reads_left = RESCAN_AFTER
            return None
        return page

    def _request(self, partition: str) -> dict[str, Any]:
        return {
            "TableName": self.table.name,
            "IndexName": names.DUE_WORK_INDEX,
            "KeyConditionExpression": "#k = :k",
            "ExpressionAttributeNames": {"#k": DUE_KIND},
            "ExpressionAttributeValues": {":k": {"S": partition}},
        }

    def _page(self, request: dict[str, Any]) -> dict[str, Any]:
        """One page; the request is moved on to the next one."""
        with dependency_guard():
            page: dict[str, Any] = self.table.client.query(**request)
        if page.get("LastEvaluatedKey"):
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return page


def _due_from(raw: Item) -> DueItem:
    def text(name: str) -> str | None:
        value = raw.get(name)
        return str(value["S"]) if value and "S" in value else None

    escalation = text("escalation")
    pk, sk = str(raw["pk"]["S"]), str(raw["sk"]["S"])
    return DueItem(
        kind=DueKind(str(raw[DUE_KIND]["S"]).split("#", 1)[0]),
        message_id=text("message_id") or pk.removeprefix(MESSAGE_PK_PREFIX),
        due_at=int(raw[names.DUE_WORK_INDEX_SORT_KEY]["N"]),
        state=text("state") or "",
        escalation=Escalation.from_json(json.loads(escalation)) if escalation else None,
        idempotency_key=text("idem_key"),
        receipt_id=pk.removeprefix(RECEIPT_PK_PREFIX) if sk == RECEIPT_SK else None,
        on_receipt=sk == MESSAGE_RECEIPT_SK,
        # A message receipt's marker was set by an event that cannot know whether the message
        # escalates, as was an SMS receipt's that a status record wrote before the publisher
        # (no flag yet): the poller reads the message to find out.
        escalates=escalation is not None or _flag(raw) or sk == MESSAGE_RECEIPT_SK,
    )


def _flag(raw: Item) -> bool:
    """An SMS receipt's `escalates` (sms_receipts.py); absent: not known yet, so True."""
    flag = raw.get(ESCALATES)
    return bool(flag.get("BOOL")) if flag is not None else raw["pk"]["S"].startswith(RECEIPT_PK_PREFIX)
