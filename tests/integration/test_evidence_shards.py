"""The evidence index is write-sharded, and the export merges its shards back into one order."""

from datetime import UTC, datetime, timedelta

import boto3

from sendledger import names
from sendledger.adapters.dynamodb.evidence_index import created_in
from sendledger.adapters.dynamodb.expressions import encode_item
from sendledger.adapters.dynamodb.keys import EVIDENCE_SHARDS, evidence_partition, message_pk
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.clock import iso
from sendledger.domain.export_window import Position, Window
from sendledger.domain.ids import keyed_message_id
from tests.conftest import TABLE

OWNER, OTHER = "0123456789abcdef01234567", "fedcba9876543210fedcba98"
START = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)


def put_entry(owner, at, message_id, partition=None):
    """A message item as the index sees it (its keys); `partition` overrides the sharded one."""
    item = {
        "pk": message_pk(message_id),
        "sk": "MSG",
        names.EVIDENCE_INDEX_PARTITION_KEY: partition or evidence_partition(owner, at, message_id),
        names.EVIDENCE_INDEX_SORT_KEY: iso(at),
    }
    boto3.client("dynamodb").put_item(TableName=TABLE, Item=encode_item(item))


def export(owner, window, limit):
    table, pages, after = Table(TABLE), [], None
    while len(pages) < 100:
        page = created_in(table, owner, window, after, limit)
        pages.append(page.positions)
        if not page.more:
            return pages
        after = page.positions[-1]
    raise AssertionError("the export never ended")


def test_one_callers_day_spreads_over_the_shards_and_reads_back_in_order(aws):
    # Given 120 messages of one caller over two UTC days, three of them in one millisecond, one
    # written before sharding (the unsharded partition), and another caller's messages between them
    expected = []
    for index in range(60):
        at = START + timedelta(minutes=6 * index) if index not in (40, 41) else START + timedelta(minutes=240)
        message_id = keyed_message_id(f"shard-{index}")
        legacy = f"{OWNER}#{at:%Y-%m-%d}" if index == 7 else None  # as written before sharding
        put_entry(OWNER, at, message_id, legacy)
        put_entry(OTHER, at, keyed_message_id(f"other-{index}"))
        expected.append((at.replace(microsecond=at.microsecond // 1000 * 1000), message_id))
    expected.sort()
    window = Window(START, START + timedelta(hours=7))
    # When the caller exports it seven at a time
    pages = export(OWNER, window, 7)
    # Then each of its messages once, in (time, id) order, none of the other caller's, in full pages
    found = [(p.created_at, p.message_id) for page in pages for p in page]
    assert found == expected
    assert all(len(page) == 7 for page in pages[:-1]) and pages[-1]
    # And the day's entries really are spread: no shard holds more than a quarter of them
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    mine = [item[names.EVIDENCE_INDEX_PARTITION_KEY]["S"] for item in items if item["pk"]["S"].startswith("MSG#")]
    per_partition = {key: mine.count(key) for key in set(mine) if key.startswith(OWNER)}
    assert len(per_partition) > EVIDENCE_SHARDS and max(per_partition.values()) <= 60 / 4


def test_a_cursor_resumes_after_its_position_in_every_shard(aws):
    # Given five messages in one millisecond, three of them in one shard, and two after it
    at = START + timedelta(minutes=1)
    candidates = [keyed_message_id(f"tie-{index}") for index in range(200)]
    shard_of = {mid: evidence_partition(OWNER, at, mid) for mid in candidates}
    crowded = next(p for p in shard_of.values() if list(shard_of.values()).count(p) >= 3)
    ids = sorted([mid for mid in candidates if shard_of[mid] == crowded][:3] + candidates[-2:])
    for message_id in reversed(ids):  # written in the reverse of the order they are read in
        put_entry(OWNER, at, message_id)
    later = [keyed_message_id("later-a"), keyed_message_id("later-b")]
    for offset, message_id in enumerate(later, start=1):
        put_entry(OWNER, at + timedelta(seconds=offset), message_id)
    window = Window(START, START + timedelta(hours=1))
    # When a page resumes after the second of the tied ones
    page = created_in(Table(TABLE), OWNER, window, Position(at, ids[1]), 10)
    # Then it starts with the third of them, by id, and nothing is repeated or skipped
    assert [p.message_id for p in page.positions] == [*ids[2:], *later] and not page.more


def test_a_cursor_naming_another_callers_message_only_moves_through_ones_own(aws):
    at = START + timedelta(minutes=5)
    mine = [keyed_message_id(f"mine-{index}") for index in range(3)]
    for offset, message_id in enumerate(mine):
        put_entry(OWNER, at + timedelta(seconds=offset), message_id)
    theirs = keyed_message_id("theirs")
    put_entry(OTHER, at + timedelta(seconds=1), theirs)
    window = Window(START, START + timedelta(hours=1))
    forged = Position(at + timedelta(seconds=1), theirs)
    page = created_in(Table(TABLE), OWNER, window, forged, 10)
    assert theirs not in [p.message_id for p in page.positions]
    assert set(p.message_id for p in page.positions) <= set(mine)
