"""The evidence index: one caller's message items by creation time, a partition per UTC day.

A window of up to 31 days is read day by day, each day's partition from the window's bounds
(or the cursor's position) on; DynamoDB's own ExclusiveStartKey resumes inside a day, so two
messages created in the same millisecond are neither skipped nor repeated.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sendledger import names
from sendledger.adapters.dynamodb.keys import MESSAGE_SK, evidence_day, message_pk
from sendledger.adapters.dynamodb.table import Table, dependency_guard
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.export_window import Position, Window
from sendledger.ports.messages import CreatedPage

DAY = names.EVIDENCE_INDEX_PARTITION_KEY
CREATED = names.EVIDENCE_INDEX_SORT_KEY


def created_in(table: Table, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
    found: list[Position] = []
    days = window.days(after.created_at if after else None)
    last = window.until - timedelta(milliseconds=1)  # BETWEEN is inclusive; the window's end is not
    for index, day in enumerate(days):
        request: dict[str, Any] = {
            "TableName": table.name,
            "IndexName": names.EVIDENCE_INDEX,
            "KeyConditionExpression": "#d = :d AND #c BETWEEN :lo AND :hi",
            "ExpressionAttributeNames": {"#d": DAY, "#c": CREATED},
            "ExpressionAttributeValues": {
                ":d": {"S": evidence_day(owner, day)},
                ":lo": {"S": iso(max(window.since, day))},
                ":hi": {"S": iso(min(last, day + timedelta(days=1) - timedelta(milliseconds=1)))},
            },
        }
        if after is not None and index == 0:
            request["ExclusiveStartKey"] = _start_key(owner, after)
        while True:
            request["Limit"] = limit - len(found)
            with dependency_guard():
                page: dict[str, Any] = table.client.query(**request)
            found += [_position(item) for item in page.get("Items", [])]
            more = page.get("LastEvaluatedKey")
            if len(found) >= limit:
                # Full: more may follow in this day or a later one (at worst, an empty last page).
                return CreatedPage(found, bool(more) or index < len(days) - 1)
            if not more:
                break
            request["ExclusiveStartKey"] = more
    return CreatedPage(found, False)


def _start_key(owner: str, after: Position) -> dict[str, Any]:
    return {
        "pk": {"S": message_pk(after.message_id)},
        "sk": {"S": MESSAGE_SK},
        DAY: {"S": evidence_day(owner, after.created_at)},
        CREATED: {"S": iso(after.created_at)},
    }


def _position(item: dict[str, Any]) -> Position:
    return Position(parse_iso(str(item[CREATED]["S"])), str(item["pk"]["S"]).removeprefix("MSG#"))
