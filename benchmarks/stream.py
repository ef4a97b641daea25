"""The DynamoDB stream the benchmarks' tables do not have, and the publisher's receipt writer.

The bench's tables have no stream: a logged request's committed writes (the items before and
after, as NEW_AND_OLD_IMAGES) stand in for its records, so the publisher's work off the API
path (labels, SMS receipts) is played from them.
"""

from __future__ import annotations

from typing import Any

from benchmarks.aws import World
from benchmarks.counting import RequestLog


def receipt_writer(world: World) -> Any:
    from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
    from sendledger.adapters.dynamodb.table import Table

    return SmsReceiptItems(Table(world.resources.ledger_table))


def stream_records(log: RequestLog) -> list[dict[str, Any]]:
    """The stream records (NEW_AND_OLD_IMAGES) of the logged requests' committed writes, in order."""
    records = []
    for request in log.requests:
        if request.status != 200:
            continue  # nothing committed, nothing streamed
        for label, new in request.after.items():
            old = request.before.get(label)
            if new is None or new == old:
                continue
            change = {"Keys": {"pk": new["pk"], "sk": new["sk"]}, "NewImage": new, **({"OldImage": old} if old else {})}
            records.append({"eventName": "MODIFY" if old else "INSERT", "dynamodb": change})
    return records
