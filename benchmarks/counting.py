"""DynamoDB request logging for the benchmark, on *every* DynamoDB client of the process.

The hook is the one the tests count with (tests/support/counting.py): it wraps
`botocore.session.Session.create_client` so that each new DynamoDB client (boto3, the ledger's,
the baseline's Powertools persistence layer, the ingestion store alike) forwards its botocore
events to the active observers, and clients alive before it was installed are found and hooked
too. :func:`counting` additionally hooks `ledger_emitters(ledger)` (same unique ids: never
counted twice).

Per request a :class:`RequestLog` records the operation, the API parameters
(`before-parameter-build`) and the parsed answer (`after-call`), from which
:mod:`benchmarks.capacity` derives capacity units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support import counting as shared

_PARAMS_KEY = "sendledger_benchmark_params"


@dataclass
class Request:
    operation: str
    params: dict[str, Any]
    status: int = 0
    response: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, float] = field(default_factory=dict)
    before: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # written items, before the call
    after: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # and after it


@dataclass(eq=False)
class RequestLog(shared.Observer):
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

    # --- botocore events (through the shared hook) ---------------------------------------
    @property
    def _request_key(self) -> str:
        return f"{_PARAMS_KEY}_request_{id(self)}"

    def before_parameter_build(self, **kwargs: Any) -> None:
        kwargs["context"][_PARAMS_KEY] = dict(kwargs["params"])

    def before_call(self, **kwargs: Any) -> None:
        context = kwargs["context"]
        request = Request(kwargs["model"].name, context.get(_PARAMS_KEY, {}))
        from benchmarks.capacity import snapshot

        request.before = snapshot(request.operation, request.params)
        context[self._request_key] = request
        self.requests.append(request)

    def after_call(self, **kwargs: Any) -> None:
        request: Request | None = kwargs["context"].get(self._request_key)
        if request is None:
            return
        request.status = int(getattr(kwargs["http_response"], "status_code", 0) or 0)
        request.response = kwargs["parsed"] or {}
        from benchmarks.capacity import units_for

        request.capacity = units_for(request)


def install() -> None:
    """Hook every DynamoDB client, existing or created from now on (boto3, Powertools)."""
    shared.install()


@contextmanager
def counting(*ledgers: Any) -> Iterator[RequestLog]:
    """Log DynamoDB requests made inside the block (the ledger's own emitters included)."""
    for ledger in ledgers:
        for emitter in shared.ledger_emitters(ledger):
            shared.watch_emitter(emitter)
    with shared.observing(RequestLog()) as log:
        yield log
