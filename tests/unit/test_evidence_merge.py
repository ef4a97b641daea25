"""The export's merge of the evidence index's shards, against a client that pages as DynamoDB may."""

from datetime import UTC, datetime, timedelta

from sendledger import names
from sendledger.adapters.dynamodb.evidence_index import created_in
from sendledger.adapters.dynamodb.keys import evidence_partitions
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.clock import iso
from sendledger.domain.export_window import Window

OWNER = "0123456789abcdef01234567"
DAY = datetime(2026, 12, 1, tzinfo=UTC)


class PagingClient:
    """Answers Query from fixed entries per partition, `page` at a time, in the order given: the
    index orders a partition by creation time only, so entries of one millisecond come in any order."""

    def __init__(self, entries: dict[str, list[tuple[datetime, str]]], page: int) -> None:
        self.entries, self.page, self.queries = entries, page, 0

    def query(self, **request):
        self.queries += 1
        partition = request["ExpressionAttributeValues"][":p"]["S"]
        found = self.entries.get(partition, [])
        start = int((request.get("ExclusiveStartKey") or {}).get("offset", {}).get("N", 0))
        chunk = found[start : start + min(self.page, request["Limit"])]
        items = [{"pk": {"S": f"MSG#{mid}"}, names.EVIDENCE_INDEX_SORT_KEY: {"S": iso(at)}} for at, mid in chunk]
        answer = {"Items": items}
        if start + len(chunk) < len(found):
            answer["LastEvaluatedKey"] = {"offset": {"N": str(start + len(chunk))}}
        return answer


def test_entries_of_one_millisecond_come_out_by_id_across_pages_and_shards():
    tie = DAY + timedelta(hours=3)
    partitions = evidence_partitions(OWNER, DAY)
    entries = {
        # one shard: a tie written out of order, and split by a page boundary
        partitions[1]: [(tie, "msg_F"), (tie, "msg_D"), (tie, "msg_B"), (tie + timedelta(seconds=1), "msg_H")],
        partitions[2]: [(tie - timedelta(seconds=1), "msg_A"), (tie, "msg_C"), (tie, "msg_E")],
        partitions[0]: [(tie, "msg_A0")],  # written before sharding
    }
    client = PagingClient(entries, page=2)
    window = Window(DAY, DAY + timedelta(days=1))
    pages, after = [], None
    while True:
        page = created_in(Table("ledger", client), OWNER, window, after, 3)
        pages.append([p.message_id for p in page.positions])
        if not page.more:
            break
        after = page.positions[-1]
    assert [mid for page in pages for mid in page] == [
        "msg_A",
        "msg_A0",
        "msg_B",
        "msg_C",
        "msg_D",
        "msg_E",
        "msg_F",
        "msg_H",
    ]
    assert all(len(page) == 3 for page in pages[:-1])
