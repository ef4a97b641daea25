"""Which partition keys a counted DynamoDB request touched, and the hottest one over many sends.

A partition key takes at most 1,000 write units and 3,000 read units a second, whoever sends
them; a key that every send of one caller writes caps that caller there. Touched means: the
table partition of every item read or written, and, for a write that changes an item's entry in
a global secondary index (added, removed, re-keyed or re-projected), that index's partition
keys before and after. Items are read from moto's copy before and after the request
(benchmarks/capacity.py), so what is counted is what the product wrote, not what its key
functions say it would.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.counting import Request

_EQUALS = re.compile(r"(#?\w+)\s*=\s*(:\w+)")


def touched(requests: Iterable[Request]) -> set[str]:
    found: set[str] = set()
    for request in requests:
        found |= _table_partitions(request.operation, request.params)
        found |= _index_partitions(request)
    return found


def _table_partitions(operation: str, params: dict[str, Any]) -> set[str]:
    if operation in ("GetItem", "UpdateItem", "DeleteItem"):
        return {_pk(params.get("Key"))}
    if operation == "PutItem":
        return {_pk(params.get("Item"))}
    if operation == "TransactWriteItems":
        found = set()
        for action in params.get("TransactItems", []):
            (_, body), *_ = action.items()
            found.add(_pk(body.get("Key") or body.get("Item")))
        return found
    if operation == "BatchGetItem":
        return {_pk(key) for spec in (params.get("RequestItems") or {}).values() for key in spec.get("Keys", [])}
    if operation == "Query":
        match = _EQUALS.search(str(params.get("KeyConditionExpression", "")))
        if not match:
            return set()
        value = (params.get("ExpressionAttributeValues") or {}).get(match.group(2), {})
        index = params.get("IndexName")
        return {f"{index}:{_text(value)}" if index else f"table:{_text(value)}"}
    return set()


def _pk(key: dict[str, Any] | None) -> str:
    return f"table:{_text((key or {}).get('pk', {}))}"


def _text(value: dict[str, Any]) -> str:
    (_, raw), *_ = value.items() if value else [("S", "?")]
    return str(raw)


def _index_partitions(request: Request) -> set[str]:
    from benchmarks.capacity import index_changes

    found: set[str] = set()
    for label, after in request.after.items():
        for index, keys, old, new in index_changes(request.before.get(label), after):
            found |= {f"{index}:{_text(entry[keys[0]])}" for entry in (old, new) if entry}
    return found


def hottest(per_send: list[set[str]]) -> dict[str, Any]:
    """The partition key the most sends touched, and the share of all sends that touched it."""
    counts: Counter[str] = Counter(key for keys in per_send for key in keys)
    if not per_send or not counts:
        return {"share": None, "partition": None, "sends": len(per_send)}
    partition, hits = counts.most_common(1)[0]
    top = [
        {"partition": _masked(key), "share": round(count / len(per_send), 4)} for key, count in counts.most_common(5)
    ]
    return {
        "share": round(hits / len(per_send), 4),
        "partition": _masked(partition),
        "sends": len(per_send),
        "top": top,
    }


def _masked(key: str) -> str:
    """Recipient addresses stay out of the results (a recipient partition is named by its kind)."""
    return re.sub(r"SUP#(email|sms):.*", r"SUP#\1:<recipient>", key)
