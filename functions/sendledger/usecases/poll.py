"""One poll cycle (EventBridge schedule → poller Lambda), within the Lambda's time budget.

1. drain the SES events queue, pipelined (usecases/queue_drain.py: delete only what was applied;
   poison stays for the DLQ); SES watermark = cycle start when drained to empty with nothing left behind;
   then each provider webhook queue the same way (usecases/webhook_drain.py), each its own watermark;
2. reconcile SMS delivery-status logs with FilterLogEvents from the cursor in DynamoDB (moved
   only after each page is applied); SMS watermark = cycle start when read to the end;
2b. pull Mailgun's Events API from its cursor (usecases/mailgun_poll.py); Mailgun watermark =
   the finality bound once every event before it is applied; unknown Mailgun sends searched
   for in it (usecases/mailgun_lookup.py);
3. resolve due work (leases, `unknown`, `pending`);
4. escalations;
5. metrics: watermark ages and the unknown backlog (the suppression lag is measured per event).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain.events import DeliveryEvent, MalformedEvent
from sendledger.domain.messages import DueKind
from sendledger.domain.ses_events import parse_sqs_body
from sendledger.domain.sms_events import LogRecord
from sendledger.ports.ingestion import QueueMessage
from sendledger.usecases import (
    escalate,
    fan_out,
    mailgun_lookup,
    mailgun_poll,
    queue_drain,
    resolve_unknown,
    webhook_drain,
)
from sendledger.usecases.ingest import (
    IngestReport,
    MetricPoint,
    Pipeline,
    ingest_event,
    ingest_read_record,
    read_log_record,
)

logger = Logger(child=True)

SAFETY_SECONDS = 8.0  # stop starting new work this close to the Lambda timeout
SMS_FIRST_LOOKBACK = timedelta(hours=1)  # where a fresh cursor starts
LOG_OVERLAP_MS = 300_000  # re-read this much before the cursor: late-ingested records
LOG_PAGE_LIMIT = 1000
MAX_SEEN_IDS = 5000


@dataclass
class CycleReport(IngestReport):
    started_at: datetime | None = None
    ses_drained: bool = False
    sms_read_to_end: bool = False
    resolved: dict[str, int] = field(default_factory=dict)
    resolved_messages: list[tuple[str, str]] = field(default_factory=list)  # (what, message id)
    escalated: int = 0
    errors: list[str] = field(default_factory=list)

    def bump(self, what: str, message_id: str | None = None) -> None:
        self.resolved[what] = self.resolved.get(what, 0) + 1
        if message_id is not None:
            self.resolved_messages.append((what, message_id))

    def summary(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "duplicates": self.duplicates,
            "suppressed": self.suppressed,
            "poison": self.poison,
            "ses_drained": self.ses_drained,
            "sms_read_to_end": self.sms_read_to_end,
            "resolved": self.resolved,
            "resolved_messages": [{"message_id": mid, "outcome": what} for what, mid in self.resolved_messages],
            "escalated": self.escalated,
        }


class CycleFailed(Exception):
    """A step failed; the others ran. Raised at the end so the invocation counts as an error."""

    def __init__(self, report: CycleReport) -> None:
        super().__init__("; ".join(report.errors))
        self.report = report


def poll_cycle(pipeline: Pipeline, seconds_left: Callable[[], float]) -> CycleReport:
    services = pipeline.services
    started = services.clock.now()
    report = CycleReport(started_at=started)
    first_error: BaseException | None = None

    def step(name: str, run: Callable[[], None]) -> None:
        nonlocal first_error
        if seconds_left() < SAFETY_SECONDS:
            report.errors.append(f"{name}: out of time")
            return
        try:
            run()
        except Exception as exc:
            logger.exception("poll step failed", extra={"step": name})
            report.errors.append(f"{name}: {type(exc).__name__}")
            first_error = first_error or exc

    def ses() -> None:
        if pipeline.ses_queue is None:
            return
        report.ses_drained = drain_ses_queue(pipeline, seconds_left, report)
        if report.ses_drained:
            pipeline.services.poller_state.set_watermark("ses", started)

    def sms() -> None:
        if pipeline.logs is None:
            return
        report.sms_read_to_end = reconcile_sms_logs(pipeline, started, seconds_left, report)
        if report.sms_read_to_end:
            pipeline.services.poller_state.set_watermark("sms", started)

    def mailgun() -> None:
        if pipeline.mailgun_events is None:
            return
        watermark = mailgun_poll.poll_mailgun(pipeline, started, seconds_left, report)
        if watermark is not None:
            pipeline.services.poller_state.set_watermark(mailgun_poll.SOURCE, watermark)
        for message_id in mailgun_lookup.look_up_unknown_sends(pipeline, seconds_left, report):
            report.bump("unknown_found_by_search", message_id)

    def webhooks() -> None:
        for source, queue in pipeline.webhook_queues.items():
            if webhook_drain.drain_webhook_queue(pipeline, source, queue, seconds_left, report):
                pipeline.services.poller_state.set_watermark(source, started)

    step("ses", ses)
    step("webhooks", webhooks)
    step("sms", sms)
    step("mailgun", mailgun)
    step("due_work", lambda: resolve_unknown.resolve_due_work(pipeline, seconds_left, report))
    step("escalation", lambda: escalate.run_escalations(pipeline, seconds_left, report))
    step("metrics", lambda: _cycle_metrics(pipeline, report))
    logger.info(
        "poll cycle",
        extra={
            **report.summary(),
            "errors": report.errors,
        },
    )
    if first_error is not None:
        raise CycleFailed(report) from first_error
    return report


# --- 1. SES queue ----------------------------------------------------------------------------------


def drain_ses_queue(pipeline: Pipeline, seconds_left: Callable[[], float], report: IngestReport) -> bool:
    """True when the queue was read to empty and every message received was applied and deleted."""
    queue, settings = pipeline.ses_queue, pipeline.services.settings
    assert queue is not None
    parts: list[IngestReport] = []  # one per apply, written on its thread, merged on this one
    # Each body is parsed once, when its lane is chosen; its apply takes the same events.
    parsed: dict[str, list[DeliveryEvent] | str] = {}  # by SQS message id: its events, or why unreadable

    def read(message: QueueMessage) -> list[DeliveryEvent] | str:
        if message.message_id not in parsed:
            try:
                parsed[message.message_id] = parse_sqs_body(message.body)
            except MalformedEvent as exc:
                parsed[message.message_id] = str(exc)
        return parsed[message.message_id]

    def lane(message: QueueMessage) -> str | None:
        """Who the message's event is about (an unreadable one is independent of everything)."""
        events = read(message)
        return events[0].recipient_key if isinstance(events, list) and events else None

    def apply(message: QueueMessage) -> bool:
        part = IngestReport()
        parts.append(part)
        events = read(message)
        parsed.pop(message.message_id, None)  # applied once per receipt: no need to keep it
        if isinstance(events, str):
            part.poison += 1
            # Not deleted: after maxReceiveCount the redrive policy moves it to the DLQ.
            logger.error(
                "unreadable SES event message left for the DLQ",
                extra={"sqs_message_id": message.message_id, "receive_count": message.receive_count, "error": events},
            )
            return False
        for event in events:
            ingest_event(pipeline.services, pipeline.events, event, part)
        return True

    try:
        drained = queue_drain.drain(
            queue, apply, lane, settings.poll_apply_concurrency, lambda: seconds_left() < SAFETY_SECONDS
        )
    finally:
        for part in parts:
            report.absorb(part)
    # Push mode: the SQS event source may hold messages it has not applied yet.
    return drained and (settings.ingestion_mode != "push" or queue.in_flight() == 0)


# --- 2. SMS logs -------------------------------------------------------------------------------


def reconcile_sms_logs(
    pipeline: Pipeline, started: datetime, seconds_left: Callable[[], float], report: IngestReport
) -> bool:
    settings, logs, stored = pipeline.services.settings, pipeline.logs, pipeline.services.poller_state
    assert logs is not None
    groups = [group for group in (settings.sms_success_log_group, settings.sms_failure_log_group) if group]
    raw = stored.cursor("sms")
    cursor: dict[str, Any] = json.loads(raw) if raw else {}
    for group in groups:
        state = cursor.get(group) or {"start": _ms(started - SMS_FIRST_LOOKBACK), "seen": {}}
        token: str | None = None
        while True:
            if seconds_left() < SAFETY_SECONDS:
                return False
            page = logs.filter(group, max(0, int(state["start"]) - LOG_OVERLAP_MS), token, LOG_PAGE_LIMIT)
            seen: dict[str, int] = state["seen"]
            _apply_sms_records(pipeline, [record for record in page.events if record.log_event_id not in seen], report)
            state = advance_cursor(state, page.events)
            updated = json.dumps({**cursor, group: state}, sort_keys=True, separators=(",", ":"))
            if updated != raw:
                # Committed only now: everything derived from this page is persisted.
                stored.put_cursor("sms", raw, updated, pipeline.services.clock.now())
                raw, cursor = updated, json.loads(updated)
            token = page.next_token
            if not token:
                break
    return True


def _apply_sms_records(pipeline: Pipeline, records: list[LogRecord], report: IngestReport) -> None:
    """Raises the first failure once all are tried: the cursor stays, and the page is read again."""
    parts = {record.log_event_id: IngestReport() for record in records}
    read = {record.log_event_id: read_log_record(record) for record in records}  # once, for lane and apply

    def lane(record: LogRecord) -> str | None:
        event = read[record.log_event_id]
        return event.recipient_key if event else None  # an unreadable record is independent of all

    def apply(record: LogRecord) -> None:
        event = read[record.log_event_id]
        ingest_read_record(pipeline.services, pipeline.events, event, parts[record.log_event_id])

    _, failure = fan_out.in_groups(records, lane, apply, pipeline.services.settings.poll_apply_concurrency)
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


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


# --- 5. metrics ------------------------------------------------------------------------------


def _cycle_metrics(pipeline: Pipeline, report: CycleReport) -> None:
    services = pipeline.services
    now = services.clock.now()
    ages: list[float] = []
    sources = ["ses"] if pipeline.ses_queue is not None else []
    sources.extend(pipeline.webhook_queues)
    if pipeline.logs is not None:
        sources.append("sms")
    if pipeline.mailgun_events is not None:
        sources.append(mailgun_poll.SOURCE)
    for source in sources:
        watermark = services.poller_state.watermark(source)
        if watermark is None:
            continue
        age = max(0.0, (now - watermark).total_seconds())
        ages.append(age)
        report.metrics.append(MetricPoint(names.METRIC_WATERMARK_AGE_SECONDS, age, "Seconds", {"source": source}))
    if ages:
        # The alarm watches the worst source under the service dimension only.
        report.metrics.append(MetricPoint(names.METRIC_WATERMARK_AGE_SECONDS, max(ages), "Seconds"))
    backlog = pipeline.due_work.count(DueKind.UNKNOWN)
    report.metrics.append(MetricPoint(names.METRIC_UNKNOWN_BACKLOG, float(backlog), "Count"))
