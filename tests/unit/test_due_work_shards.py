"""A due-work pass asks every shard of its kind at once (adapters/dynamodb/due_work.py)."""

import threading
from datetime import UTC, datetime
from typing import Any

from sendledger.adapters.dynamodb.due_work import DueWork
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
