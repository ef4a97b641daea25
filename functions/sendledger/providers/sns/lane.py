"""SNS SMS delivery-status logs: reconciled by the poller with FilterLogEvents from a cursor.

The CloudWatch Logs subscription (handlers/sms_delivery_logs.py) applies records as SNS writes
them; this lane reads every log group from the cursor stored in DynamoDB, applies what the
subscription missed (a record it already applied is a 1-request duplicate), and moves the
cursor only after each page is applied. Read to the end, the `sms` watermark is the cycle start.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from sendledger.domain.events import DeliveryEvent, MalformedEvent
from sendledger.ports.log_subscription import LogBatch, LogRecord
from sendledger.ports.reports import CycleReport, IngestReport
from sendledger.providers.sns import SOURCE
from sendledger.providers.sns.events import LogReader, decode_subscription_event, parse_sms_record
from sendledger.usecases import fan_out

if TYPE_CHECKING:
    from sendledger.domain.clock import Clock
    from sendledger.ports.poller_state import PollerStateStore
    from sendledger.ports.providers import EventSink, LaneStores
    from sendledger.settings import Settings

logger = Logger(child=True)

SAFETY_SECONDS = 8.0
FIRST_LOOKBACK = timedelta(hours=1)  # where a fresh cursor starts
LOG_OVERLAP_MS = 300_000  # re-read this much before the cursor: late-ingested records
LOG_PAGE_LIMIT = 1000
MAX_SEEN_IDS = 5000


@dataclass
class LogLane:
    logs: LogReader
    groups: list[str]
    cursors: PollerStateStore  # the cursor of every log group, one item
    clock: Clock
    concurrency: int = 1  # applies at once (settings.poll_apply_concurrency)
    name: str = "sms"
    source: str = SOURCE
    completes_source: bool = True  # the source's complete lane: it moves the watermark

    def run(
        self, sink: EventSink, started: datetime, seconds_left: Callable[[], float], report: CycleReport
    ) -> datetime | None:
        return started if reconcile(sink, self, started, seconds_left, report) else None


def log_lane(settings: Settings, stores: LaneStores, logs: LogReader, groups: list[str]) -> LogLane:
    return LogLane(logs, groups, stores.cursors, stores.clock, settings.poll_apply_concurrency)


def reconcile(
    sink: EventSink, lane: LogLane, started: datetime, seconds_left: Callable[[], float], report: IngestReport
) -> bool:
    """True when every log group was read to its end."""
    stored = lane.cursors
    raw = stored.cursor(SOURCE)
    cursor: dict[str, Any] = json.loads(raw) if raw else {}
    for group in lane.groups:
        state = cursor.get(group) or {"start": _ms(started - FIRST_LOOKBACK), "seen": {}}
        token: str | None = None
        while True:
            if seconds_left() < SAFETY_SECONDS:
                return False
            page = lane.logs.filter(group, max(0, int(state["start"]) - LOG_OVERLAP_MS), token, LOG_PAGE_LIMIT)
            seen: dict[str, int] = state["seen"]
            fresh = [record for record in page.events if record.log_event_id not in seen]
            _apply_records(sink, fresh, lane.concurrency, report)
            state = advance_cursor(state, page.events)
            updated = json.dumps({**cursor, group: state}, sort_keys=True, separators=(",", ":"))
            if updated != raw:
                # Committed only now: everything derived from this page is persisted.
                stored.put_cursor(SOURCE, raw, updated, lane.clock.now())
                raw, cursor = updated, json.loads(updated)
            token = page.next_token
            if not token:
                break
    return True


def _apply_records(sink: EventSink, records: list[LogRecord], concurrency: int, report: IngestReport) -> None:
    """Raises the first failure once all are tried: the cursor stays, and the page is read again."""
    parts = {record.log_event_id: IngestReport() for record in records}
    read = {record.log_event_id: read_log_record(record) for record in records}  # once, for lane and apply

    def recipient_of(record: LogRecord) -> str | None:
        event = read[record.log_event_id]
        return event.recipient_key if event else None  # an unreadable record is independent of all

    def apply(record: LogRecord) -> None:
        apply_read(sink, read[record.log_event_id], parts[record.log_event_id])

    _, failure = fan_out.in_groups(records, recipient_of, apply, concurrency)
    for part in parts.values():
        report.absorb(part)
    if failure is not None:
        raise failure


def advance_cursor(state: dict[str, Any], records: list[LogRecord]) -> dict[str, Any]:
    seen: dict[str, int] = dict(state.get("seen") or {})
    start = int(state["start"])
    for record in records:
        seen[record.log_event_id] = record.timestamp_ms
        start = max(start, record.timestamp_ms)
    floor = start - LOG_OVERLAP_MS
    kept = sorted(((ts, event_id) for event_id, ts in seen.items() if ts >= floor), reverse=True)[:MAX_SEEN_IDS]
    return {"start": start, "seen": {event_id: ts for ts, event_id in kept}}


def read_log_record(record: LogRecord) -> DeliveryEvent | None:
    """The record's event, or None when it is unreadable (logged here, once)."""
    try:
        return parse_sms_record(record.message)
    except MalformedEvent as exc:
        logger.error("unreadable SMS status record", extra={"log_event_id": record.log_event_id, "error": str(exc)})
        return None


def apply_read(sink: EventSink, event: DeliveryEvent | None, report: IngestReport) -> None:
    """A read record's event; an unreadable record (None) counts as poison and is skipped."""
    if event is None:
        report.poison += 1
        return
    sink.apply(event, report)


def ingest_log_record(sink: EventSink, record: LogRecord, report: IngestReport) -> None:
    """One SMS delivery-status log event; an unreadable one is logged and skipped (retrying cannot fix it)."""
    apply_read(sink, read_log_record(record), report)


@dataclass(frozen=True)
class StatusLogSubscription:
    """The records as SNS writes them, by the subscription's Lambda (the lane above picks up what it missed)."""

    sink: EventSink

    def decode(self, event: Mapping[str, Any]) -> LogBatch:
        return decode_subscription_event(event)

    def ingest(self, record: LogRecord, report: IngestReport) -> None:
        ingest_log_record(self.sink, record, report)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
