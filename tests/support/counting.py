"""Counts DynamoDB requests with a botocore event hook (what the budget in SPEC §5 is about)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class RequestCounter:
    def __init__(self) -> None:
        self.operations: Counter[str] = Counter()

    def __call__(self, model: Any, params: Any = None, **_: Any) -> None:
        self.operations[model.name] += 1

    @property
    def total(self) -> int:
        return sum(self.operations.values())

    def reset(self) -> None:
        self.operations.clear()


@contextmanager
def count_dynamodb_requests(ledger: Any) -> Iterator[RequestCounter]:
    counter = RequestCounter()
    emitters = ledger.request_emitters()
    for emitter in emitters:
        emitter.register("before-call.dynamodb", counter)
    try:
        yield counter
    finally:
        for emitter in emitters:
            emitter.unregister("before-call.dynamodb", counter)
