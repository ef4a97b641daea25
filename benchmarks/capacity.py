"""On-demand request units of one counted DynamoDB request (for the cost model).

Rules (DynamoDB developer guide, "Read/write capacity mode" and "Transactions"):
- standard write: 1 WRU per started KB of item; transactional write: 2 WRUs per started KB
  per item (every action of a TransactWriteItems, ConditionCheck included here: conservative);
- strongly consistent read: 1 RRU per started 4 KB; eventually consistent: half; Query sums the
  returned items before rounding; transactional read: 2 RRUs per started 4 KB per item;
- a write whose condition fails, and a cancelled transaction, are billed as attempted
  (conservative).

Item sizes follow DynamoDB's rule (attribute names + values; numbers ~1 byte per 2 digits + 1;
lists/maps 3 bytes + 1 per element). Updated / condition-checked items are sized from moto's
stored copy, looked up in the moto backend (no botocore call, so nothing extra is counted).
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


def stored_size(table: str, key: dict[str, Any]) -> int:
    """Size of the item as moto holds it now (0 when absent or not under moto)."""
    try:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        from benchmarks.environment import REGION

        item = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_item(table, key)
    except Exception:
        return 0
    return int(item.size()) if item is not None else 0


def _write_units(size: int) -> int:
    return max(1, math.ceil(size / KB))


def _read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_BLOCK))
    return float(units) if consistent else units / 2


def units_for(request: Request) -> dict[str, float]:
    op, params, response = request.operation, request.params, request.response
    wru = rru = 0.0
    if op == "PutItem":
        wru = _write_units(item_size(params.get("Item")))
    elif op == "UpdateItem":
        wru = _write_units(stored_size(params.get("TableName", ""), params.get("Key", {})))
    elif op == "DeleteItem":
        wru = _write_units(item_size(response.get("Attributes")))
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
            if kind == "Put":
                size = item_size(body.get("Item"))
            else:
                size = stored_size(body.get("TableName", ""), body.get("Key", {}))
            wru += 2 * _write_units(size)
    elif op == "TransactGetItems":
        for entry in response.get("Responses", []):
            rru += 2 * _read_units(item_size(entry.get("Item")), True)
    return {"write_request_units": wru, "read_request_units": rru}
