from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

PRINCIPAL = "arn:aws:iam::123456789012:user/test-caller"
ADMIN = "arn:aws:iam::123456789012:role/test-admin"


def caller_id(principal: str = PRINCIPAL) -> Any:
    """The id keys, messages and resets of `principal`'s requests are scoped by."""
    from sendledger.domain.callers import caller_of

    return caller_of(principal, {}).id


CALLER = caller_id()


def recent_start() -> datetime:
    """Where fake clocks start: 10:00 UTC yesterday.

    Fixed for a whole day of runs, never in the future, and inside moto's CloudWatch Logs
    retention (it drops events older than 14 days), so status records written at fake-clock
    time are still found by FilterLogEvents whatever day the suite runs.
    """
    yesterday = datetime.now(UTC) - timedelta(days=1)
    return yesterday.replace(hour=10, minute=0, second=0, microsecond=0)


@dataclass
class FakeClock:
    current: datetime = field(default_factory=recent_start)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@dataclass
class FakeSleeper:
    slept: list[float] = field(default_factory=list)
    clock: FakeClock | None = None

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.clock:
            self.clock.advance(seconds)


@dataclass
class FakeLambdaContext:
    function_name: str = "sendledger-api"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:sendledger-api"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/sendledger-api"
    log_stream_name: str = "test"
    remaining_ms: int = 29_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


_request_ids = itertools.count(1)


def api_event(
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    principal: str = PRINCIPAL,
    raw_body: str | None = None,
) -> dict[str, Any]:
    """The API Gateway REST (v1) proxy event the local stack builds for the same request."""
    from local.apigateway import build_event

    all_headers = {"Content-Type": "application/json"} if body is not None or raw_body is not None else {}
    all_headers.update(headers or {})
    text = raw_body if raw_body is not None else (json.dumps(body) if body is not None else "")
    target = f"{path}?{urlencode(query, quote_via=quote)}" if query else path
    return build_event(
        method=method,
        target=target,
        headers=all_headers.items(),
        body=text.encode("utf-8", errors="surrogatepass"),
        principal=principal,
        request_id=f"req-{next(_request_ids)}",
        now_ms=1795946400000,
    )


def lane_named(runtime: Any, name: str) -> Any:
    """The runtime's poll lane of that name (the poll step's name)."""
    for lane in runtime.lanes:
        if lane.name == name:
            return lane
    raise KeyError(f"no lane {name!r} in this runtime")


def ledger_of(services: Any) -> Any:
    """The ledger table's stores over the table `services` writes (same client: counted, faulted)."""
    from sendledger.adapters.dynamodb.ledger import LedgerTable

    return LedgerTable.over(services.messages.table, services.clock)
