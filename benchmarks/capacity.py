"""On-demand request units of one counted DynamoDB request (for the cost model).

Rules (DynamoDB developer guide, "Read/write capacity mode" and "Amazon DynamoDB
Transactions: How it works", "Capacity management for transactions"):
- standard write: 1 WRU per started KB of item (an update: of the larger of the item before
  and after); a write whose condition fails is billed as attempted;
- transactional write: 2 WRUs per started KB per item, because "DynamoDB performs two
  underlying reads or writes of every item in the transaction: one to prepare the transaction
  and one to commit the transaction" (a ConditionCheck is billed like a write: conservative);
- a cancelled transaction never commits: billed for its prepare phase, 1 WRU per started KB per
  item (`conservative_write_request_units` keeps the older "billed as attempted" figure, 2 per
  item, beside it);
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


def index_writes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> int:
    """Write units the table's indexes cost for one item going from `before` to `after`."""
    from sendledger import names

    due_work = (
        (names.DUE_WORK_INDEX_PARTITION_KEY, names.DUE_WORK_INDEX_SORT_KEY),
        names.DUE_WORK_INDEX_PROJECTION,
    )
    evidence: tuple[tuple[str, str], tuple[str, ...]] = (
        (names.EVIDENCE_INDEX_PARTITION_KEY, names.EVIDENCE_INDEX_SORT_KEY),
        (),  # KEYS_ONLY
    )
    return sum(_one_index_writes(before, after, keys, projection) for keys, projection in (due_work, evidence))


def _one_index_writes(
    before: dict[str, Any] | None, after: dict[str, Any] | None, keys: tuple[str, str], projection: tuple[str, ...]
) -> int:
    def projected(item: dict[str, Any] | None) -> dict[str, Any] | None:
        if not item or not all(k in item for k in keys):
            return None
        wanted = ("pk", "sk", *keys, *projection)
        return {name: item[name] for name in wanted if name in item}

    old, new = projected(before), projected(after)
    if old is None and new is None:
        return 0
    if old is None or new is None:
        return _write_units(item_size(new or old))
    if any(old.get(k) != new.get(k) for k in keys):
        return _write_units(item_size(old)) + _write_units(item_size(new))
    return _write_units(item_size(new)) if old != new else 0


def units_for(request: Request) -> dict[str, float]:
    op, params, response = request.operation, request.params, request.response
    wru = rru = conservative = 0.0
    before = request.before
    after = snapshot(op, params) if before else {}
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
            wru += 2 * units if succeeded else units  # cancelled: the prepare write only
            conservative += 2 * units
    elif op == "TransactGetItems":
        for entry in response.get("Responses", []):
            rru += 2 * _read_units(item_size(entry.get("Item")), True)
    index = sum(index_writes(before.get(label), after.get(label)) for label in after) if succeeded else 0
    return {
        "write_request_units": wru + index,
        "read_request_units": rru,
        # A cancelled transaction billed as attempted (every item written); the same otherwise.
        "conservative_write_request_units": (conservative or wru) + index,
    }
