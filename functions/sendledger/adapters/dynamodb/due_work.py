"""The sparse due-work index: items the poller must revisit, by kind and due time.

Its partition key is `<kind>#<shard>` (keys.due_shard): every send in flight sits in the index
until its outcome, so one value per kind would be a partition every send writes.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from typing import Any

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


class DueWork:
    def __init__(self, table: Table) -> None:
        self.table = table

    def items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]:
        found: list[DueItem] = []
        for shard in range(DUE_SHARDS):
            found += [_due_from(raw) for raw in self._query(f"{kind.value}#{shard}", until, limit)]
        return sorted(found, key=lambda item: item.due_at)[:limit]

    def count(self, kind: DueKind) -> int:
        return sum(self._count(f"{kind.value}#{shard}") for shard in range(DUE_SHARDS))

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
