"""DynamoDB request counting with botocore event hooks, on *every* DynamoDB client.

tests/support/counting.py hooks `before-call.dynamodb` on the emitters the ledger reports
(`DynamoLedger.request_emitters()`). The benchmark must also see clients the ledger does not
own: the Powertools idempotency layer of the baseline, and whatever the ingestion code builds.
So :func:`install` (called before any client exists) wraps `botocore.session.Session.create_client`
and registers one dispatching hook on each new DynamoDB client; :func:`counting` additionally
registers it on `ledger.request_emitters()` (same unique id: never counted twice).

Per request it records the operation, the API parameters (`before-parameter-build`) and the
parsed answer (`after-call`), from which :mod:`benchmarks.capacity` derives capacity units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import botocore.session

UNIQUE_ID = "sendledger-benchmark-request-counter"
_PARAMS_KEY = "sendledger_benchmark_params"

_active: list[RequestLog] = []
_state = {"installed": False}


@dataclass
class Request:
    operation: str
    params: dict[str, Any]
    status: int = 0
    response: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, float] = field(default_factory=dict)


@dataclass
class RequestLog:
    requests: list[Request] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def operations(self) -> Counter[str]:
        return Counter(request.operation for request in self.requests)

    def reset(self) -> None:
        self.requests.clear()

    def summary(self) -> list[str]:
        return [f"{r.operation}({len(r.params.get('TransactItems', [])) or 1})/{r.status}" for r in self.requests]


def _before_parameter_build(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    if _active:
        context[_PARAMS_KEY] = dict(params)


def _before_call(model: Any, context: dict[str, Any], **_: Any) -> None:
    if not _active:
        return
    request = Request(model.name, context.get(_PARAMS_KEY, {}))
    context[_PARAMS_KEY + "_request"] = request
    for log in _active:
        log.requests.append(request)


def _after_call(http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    request: Request | None = context.get(_PARAMS_KEY + "_request")
    if request is None:
        return
    request.status = int(getattr(http_response, "status_code", 0) or 0)
    request.response = parsed or {}
    from benchmarks.capacity import units_for

    request.capacity = units_for(request)


def register(emitter: Any) -> None:
    emitter.register("before-parameter-build.dynamodb", _before_parameter_build, unique_id=UNIQUE_ID + "-params")
    emitter.register("before-call.dynamodb", _before_call, unique_id=UNIQUE_ID)
    emitter.register("after-call.dynamodb", _after_call, unique_id=UNIQUE_ID + "-after")


def install() -> None:
    """Hook every DynamoDB client created from now on (boto3, pynamodb, Powertools alike)."""
    if _state["installed"]:
        return
    original = botocore.session.Session.create_client

    def create_client(self: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
        client = original(self, service_name, *args, **kwargs)
        if service_name == "dynamodb":
            register(client.meta.events)
        return client

    botocore.session.Session.create_client = create_client  # type: ignore[method-assign]
    _state["installed"] = True


@contextmanager
def counting(*ledgers: Any) -> Iterator[RequestLog]:
    """Count DynamoDB requests made inside the block (the ledger's own emitters included)."""
    for ledger in ledgers:
        for emitter in ledger.request_emitters():
            register(emitter)
    log = RequestLog()
    _active.append(log)
    try:
        yield log
    finally:
        _active.remove(log)
