"""Delivery statuses a provider writes to CloudWatch Logs, as a subscription filter hands them to
its Lambda (handlers/sms_delivery_logs.py), which the composition root gives the enabled slice's
entry: the records are CloudWatch Logs' own shape (FilterLogEvents reads the same ones back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from sendledger.domain.values import value

if TYPE_CHECKING:
    from sendledger.ports.reports import IngestReport


@value
class LogRecord:
    log_event_id: str  # numeric string in AWS, an int in moto's subscription events
    timestamp_ms: int
    message: str


@value
class LogBatch:
    control: bool  # CloudWatch Logs' check that the destination is reachable: no records
    log_group: str
    records: list[LogRecord]


class LogSubscription(Protocol):
    """A slice whose delivery statuses arrive by a log subscription, bound to the one apply routine."""

    def decode(self, event: Mapping[str, Any]) -> LogBatch:
        """The subscription's Lambda event (MalformedEvent: it is not one)."""

    def ingest(self, record: LogRecord, report: IngestReport) -> None:
        """Apply one record, counted in `report` (an unreadable one is logged and skipped)."""
