"""A due-work read is one Scan of a small index, or every shard of its kind at once when the index
is larger (adapters/dynamodb/due_work.py)."""

import threading
from datetime import UTC, datetime
from typing import Any

from sendledger.adapters.dynamodb.due_work import RESCAN_AFTER, SCAN_ITEMS, DueWork
from sendledger.adapters.dynamodb.keys import DUE_SHARDS
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.messages import DueKind

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


class ShardIndex:
    """The due-work index's Query, one answer per shard; each query waits until every shard's is in flight."""

    def __init__(self, due_at: dict[int, int]) -> None:
        self.due_at = due_at  # shard -> the due time of its one item
        self.all_in_flight = threading.Barrier(DUE_SHARDS, timeout=10)
        self.partitions: list[str] = []
        self.scans: list[dict[str, Any]] = []

    def scan(self, **request: Any) -> dict[str, Any]:
        """A larger index than one scan reads: its first page ends before the index does."""
        self.scans.append(request)
        return {"Items": [], "Count": 0, "LastEvaluatedKey": {"pk": {"S": "MSG#m"}}}

    def query(self, **request: Any) -> dict[str, Any]:
        partition = request["ExpressionAttributeValues"][":k"]["S"]
        self.partitions.append(partition)
        self.all_in_flight.wait()  # one query at a time: the barrier breaks after its timeout
        shard = int(partition.rsplit("#", 1)[1])
        if request.get("Select") == "COUNT":
            return {"Count": 2}
        item = {
            "pk": {"S": f"MSG#m{shard}"},
            "sk": {"S": "MSG"},
            "due_kind": {"S": partition},
            "due_at": {"N": str(self.due_at[shard])},
            "state": {"S": "unknown"},
        }
        return {"Items": [item]}


def test_a_pass_asks_every_shard_at_once_and_merges_them_by_due_time():
    index = ShardIndex({shard: 1_000 + (shard * 7) % DUE_SHARDS for shard in range(DUE_SHARDS)})
    due = DueWork(Table("ledger", index)).items(DueKind.UNKNOWN, NOW, 5)
    assert sorted(index.partitions) == sorted(f"unknown#{shard}" for shard in range(DUE_SHARDS))
    assert [item.due_at for item in due] == [1_000, 1_001, 1_002, 1_003, 1_004]
    assert [item.message_id for item in due] == [f"m{shard}" for shard in (0, 7, 14, 5, 12)]


def test_the_backlog_count_asks_every_shard_at_once():
    index = ShardIndex({})
    assert DueWork(Table("ledger", index)).count(DueKind.UNKNOWN) == 2 * DUE_SHARDS


class SmallIndex:
    """An index one scan reads whole: two unknowns (one due), an escalation; no query expected."""

    def __init__(self) -> None:
        self.scans: list[dict[str, Any]] = []

    def scan(self, **request: Any) -> dict[str, Any]:
        self.scans.append(request)
        assert request["IndexName"] == "due-work" and request["Limit"] == SCAN_ITEMS
        due = {"pk": {"S": "MSG#due"}, "sk": {"S": "MSG"}, "due_kind": {"S": "unknown#3"}, "due_at": {"N": "900"}}
        if request.get("Select") == "COUNT":
            return {"Count": 2, "ScannedCount": 3}
        return {"Items": [due], "Count": 1, "ScannedCount": 3}


def test_a_small_index_is_read_in_one_scan_filtered_to_the_kind_and_due_time():
    index = SmallIndex()
    work = DueWork(Table("ledger", index))
    [due] = work.items(DueKind.UNKNOWN, NOW, 5)
    assert (due.kind, due.message_id, due.due_at) == (DueKind.UNKNOWN, "due", 900)
    assert work.count(DueKind.UNKNOWN) == 2
    [items, count] = index.scans
    assert items["FilterExpression"] == "begins_with(#k, :k) AND #a <= :a"
    assert items["ExpressionAttributeValues"] == {":k": {"S": "unknown#"}, ":a": {"N": str(int(NOW.timestamp()))}}
    assert count["FilterExpression"] == "begins_with(#k, :k)" and count["Select"] == "COUNT"


def test_a_large_index_is_read_by_shards_until_a_scan_is_tried_again():
    index = ShardIndex({shard: 1_000 for shard in range(DUE_SHARDS)})
    work = DueWork(Table("ledger", index))
    for _ in range(RESCAN_AFTER + 1):
        assert len(work.items(DueKind.PENDING, NOW, 100)) == DUE_SHARDS
    # the first read's scan found the index too large: the next reads went straight to the shards
    assert len(index.scans) == 1 and len(index.partitions) == (RESCAN_AFTER + 1) * DUE_SHARDS
    work.items(DueKind.PENDING, NOW, 100)
    assert len(index.scans) == 2


class CountingIndex:
    """One scan's answer: how many items matched, and whether the scan read the whole index."""

    def __init__(self, matched: int, whole: bool = True) -> None:
        self.matched, self.whole = matched, whole
        self.scans: list[dict[str, Any]] = []

    def scan(self, **request: Any) -> dict[str, Any]:
        self.scans.append(request)
        page: dict[str, Any] = {"Count": self.matched}
        return page if self.whole else {**page, "LastEvaluatedKey": {"pk": {"S": "MSG#m"}}}


def test_nothing_due_is_proven_by_one_scan_for_any_due_item_or_any_unknown():
    index = CountingIndex(0)
    assert DueWork(Table("ledger", index)).nothing_due(NOW) is True
    [scan] = index.scans
    assert scan["Select"] == "COUNT" and scan["FilterExpression"] == "#a <= :a OR begins_with(#k, :u)"
    assert scan["ExpressionAttributeValues"] == {":a": {"N": str(int(NOW.timestamp()))}, ":u": {"S": "unknown#"}}
    assert DueWork(Table("ledger", CountingIndex(1))).nothing_due(NOW) is False
    # An index larger than one scan proves nothing: the passes ask for their kinds
    assert DueWork(Table("ledger", CountingIndex(0, whole=False))).nothing_due(NOW) is False
