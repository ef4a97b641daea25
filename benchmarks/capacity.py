"""On-demand request units of one counted DynamoDB request, billed as DynamoDB bills them.

Rules (the sources, quoted, are in benchmarks/README.md, "Capacity"):
- standard write: 1 WRU per started KB of item (an update: of the larger of the item before
  and after); a write whose condition fails is billed as attempted ("If a ConditionExpression
  evaluates to false during a conditional write, DynamoDB still consumes write capacity");
- transactional write: 2 WRUs per started KB per item ("DynamoDB performs two underlying reads
  or writes of every item in the transaction: one to prepare the transaction and one to commit
  the transaction");
- a cancelled transaction: billed as attempted, 2 WRUs per started KB per item as if it had
  committed (the guide's current wording: the capacity "is consumed even when the transaction
  is canceled"); `prepare_only_write_request_units` keeps the older, cheaper reading (1 per
  item: the prepare phase only) beside it, for comparison only;
- ConditionCheck: the guide does not say; billed like a transactional write of the checked item
  (the worst case);
- global secondary index (each of them: due-work and evidence): a table write that adds an item
  to the index, or removes one, is one index write of the projected item; one that changes the
  index key is two (delete + put); one that changes only projected attributes is one;
- strongly consistent read: 1 RRU per started 4 KB; eventually consistent: half; Query sums the
  returned items before rounding; transactional read: 2 RRUs per started 4 KB per item.

Item sizes follow DynamoDB's rule (attribute names + values; numbers ~1 byte per 2 digits + 1;
lists/maps 3 bytes + 1 per element). Written items are sized from moto's stored copy before and
after the request, looked up in the moto backend (no botocore call, so nothing extra is counted).
"""

from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.counting import Request

KB = 1024
READ_BLOCK = 4 * KB


def value_size(value: dict[str, Any]) -> int:
    (kind, raw), *_ = value.items()
    if kind == "S":
        return len(str(raw).encode("utf-8"))
    if kind == "N":
        digits = str(raw).lstrip("-").replace(".", "").lstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(base64.b64decode(raw)) if isinstance(raw, str) else len(raw)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode("utf-8")) for s in raw)
    if kind == "NS":
        return sum(value_size({"N": n}) for n in raw)
    if kind == "BS":
        return sum(value_size({"B": b}) for b in raw)
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in raw)
    if kind == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(v) for k, v in raw.items())
    return 0


def item_size(item: dict[str, Any] | None) -> int:
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def stored_item(table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    """The item as moto holds it now, in attribute-value JSON (None when absent or not under moto)."""
    try:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        from benchmarks.environment import REGION

        item = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_item(table, key)
    except Exception:
        return None
    if item is None:
        return None
    attributes: dict[str, Any] = item.to_json()["Attributes"]
    return attributes


def written_keys(operation: str, params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(table, key) of every item a write request touches."""
    if operation in ("UpdateItem", "DeleteItem"):
        return [(params.get("TableName", ""), params.get("Key", {}))]
    if operation == "PutItem":
        return [(params.get("TableName", ""), _key_of(params.get("Item", {})))]
    if operation == "TransactWriteItems":
        found = []
        for action in params.get("TransactItems", []):
            (kind, body), *_ = action.items()
            if kind != "ConditionCheck":
                found.append((body.get("TableName", ""), body.get("Key") or _key_of(body.get("Item", {}))))
        return found
    return []


def snapshot(operation: str, params: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    return {_label(table, key): stored_item(table, key) for table, key in written_keys(operation, params)}


def _key_of(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in ("pk", "sk") if name in item}


def _label(table: str, key: dict[str, Any]) -> str:
    return f"{table}|{sorted((k, str(v)) for k, v in key.items())}"


def _write_units(size: int) -> int:
    return max(1, math.ceil(size / KB))


def _read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_BLOCK))
    return float(units) if consistent else units / 2


def _indexes() -> tuple[tuple[str, tuple[str, str], tuple[str, ...]], ...]:
    """(index name, its key attributes, its projected attributes) of every index on the ledger."""
    from sendledger import names

    return (
        (
            names.DUE_WORK_INDEX,
            (names.DUE_WORK_INDEX_PARTITION_KEY, names.DUE_WORK_INDEX_SORT_KEY),
            names.DUE_WORK_INDEX_PROJECTION,
        ),
        (names.EVIDENCE_INDEX, (names.EVIDENCE_INDEX_PARTITION_KEY, names.EVIDENCE_INDEX_SORT_KEY), ()),  # KEYS_ONLY
    )


IndexChange = tuple[str, tuple[str, str], dict[str, Any] | None, dict[str, Any] | None]


def index_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[IndexChange]:
    """(index, its key attributes, entry before, entry after) for each index entry a write changes."""

    def projected(item: dict[str, Any] | None, keys: tuple[str, str], projection: tuple[str, ...]) -> Any:
        if not item or not all(k in item for k in keys):
            return None
        return {name: item[name] for name in ("pk", "sk", *keys, *projection) if name in item}

    changes: list[IndexChange] = []
    for name, keys, projection in _indexes():
        old, new = projected(before, keys, projection), projected(after, keys, projection)
        if old != new:
            changes.append((name, keys, old, new))
    return changes


def index_writes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> int:
    """Write units the table's indexes cost for one item going from `before` to `after`: an entry
    added or removed is one write of the projected item, a changed key two (delete + put), a
    changed projection one."""
    total = 0
    for _, keys, old, new in index_changes(before, after):
        if old is None or new is None:
            total += _write_units(item_size(new or old))
        elif any(old.get(k) != new.get(k) for k in keys):
            total += _write_units(item_size(old)) + _write_units(item_size(new))
        else:
            total += _write_units(item_size(new))
    return total


def units_for(request: Request) -> dict[str, float]:
    op, params, response = request.operation, request.params, request.response
    wru = rru = prepare_only = 0.0
    before = request.before
    after = snapshot(op, params) if before else {}
    request.after = after
    succeeded = 200 <= request.status < 300

    def write_size(table: str, key: dict[str, Any], put: dict[str, Any] | None = None) -> int:
        label = _label(table, key)
        return max(item_size(before.get(label)), item_size(after.get(label)), item_size(put))

    if op in ("PutItem", "UpdateItem", "DeleteItem"):
        [(table, key)] = written_keys(op, params)
        wru = _write_units(write_size(table, key, params.get("Item")))
    elif op == "GetItem":
        rru = _read_units(item_size(response.get("Item")), bool(params.get("ConsistentRead")))
    elif op in ("Query", "Scan"):
        total = sum(item_size(item) for item in response.get("Items", []))
        rru = _read_units(total, bool(params.get("ConsistentRead")))
    elif op == "BatchGetItem":
        requested = params.get("RequestItems") or {}
        for table, items in (response.get("Responses") or {}).items():
            consistent = bool((requested.get(table) or {}).get("ConsistentRead"))
            rru += sum(_read_units(item_size(item), consistent) for item in items)
    elif op == "BatchWriteItem":
        for writes in (params.get("RequestItems") or {}).values():
            wru += sum(_write_units(item_size((w.get("PutRequest") or {}).get("Item"))) for w in writes)
    elif op == "TransactWriteItems":
        for action in params.get("TransactItems", []):
            (kind, body), *_ = action.items()
            table, key = body.get("TableName", ""), body.get("Key") or _key_of(body.get("Item", {}))
            if kind == "ConditionCheck":
                size = item_size(stored_item(table, key))
            else:
                size = write_size(table, key, body.get("Item"))
            units = _write_units(size)
            wru += 2 * units  # committed or cancelled alike (see the module docstring)
            prepare_only += 2 * units if succeeded else units
    elif op == "TransactGetItems":
        for entry in response.get("Responses", []):
            rru += 2 * _read_units(item_size(entry.get("Item")), True)
    index = sum(index_writes(before.get(label), after.get(label)) for label in after) if succeeded else 0
    return {
        "write_request_units": wru + index,
        "read_request_units": rru,
        # The older reading of a cancelled transaction (its prepare writes only), for comparison.
        "prepare_only_write_request_units": (prepare_only or wru) + index,
    }
