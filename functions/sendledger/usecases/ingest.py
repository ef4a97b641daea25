"""Apply delivery events: the one idempotent routine every source goes through.

Cost per event: one TransactWriteItems. SES names the message by its tag; an SNS SMS status
record names only SNS's message id, so its outcome lands on the send's receipt under that id.
A duplicate costs its one cancelled transaction. A status record with no receipt (the Publish
answer was never recorded: timed out, or the outcome write lost the race to an event) costs the
cancelled transaction, one BatchGetItem (the destination's last send) and the transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain.events import DeliveryEvent, EventSource, MalformedEvent
from sendledger.domain.outcomes import allowed_from, target_state
from sendledger.domain.ses_events import parse_sqs_body
from sendledger.domain.sms_events import LogRecord, parse_sms_record
from sendledger.domain.suppression_rules import Action, verdict_for
from sendledger.domain.values import value
from sendledger.ports.ingestion import (
    ApplyPlan,
    ApplyResult,
    DeliveryEventStore,
    DueWorkStore,
    EscalationQueue,
    EscalationTimers,
    EventQueue,
    LogReader,
)
from sendledger.ports.providers import AcceptanceLookup, ProviderEventsApi
from sendledger.ports.webhooks import WebhookTokenStore
from sendledger.usecases.context import Services

logger = Logger(child=True)

# A status record names the destination; it proves the outcome of a send to that number whose
# SNS message id we never learned (timed-out Publish) when it was published this soon after it.
SMS_SEND_WINDOW_SECONDS = 300


@dataclass
class Pipeline:
    """What the poller and the event handlers need beyond the send path's Services."""

    services: Services
    events: DeliveryEventStore
    due_work: DueWorkStore
    escalation_timers: EscalationTimers
    ses_queue: EventQueue | None = None
    logs: LogReader | None = None
    escalations: EscalationQueue | None = None
    mailgun_events: ProviderEventsApi | None = None  # EMAIL_PROVIDER=mailgun: polled from a cursor
    # Signed Mailgun webhooks (usecases/mailgun_webhook.py): both set only when enabled.
    webhook_tokens: WebhookTokenStore | None = None
    mailgun_signing_key: Callable[[], str] | None = None
    # Verified provider webhook events by source (usecases/webhook_drain.py), and the email
    # provider's lookup of a timed-out send (usecases/resolve_unknown.py).
    webhook_queues: dict[str, EventQueue] = field(default_factory=dict)
    acceptance_lookup: AcceptanceLookup | None = None


@value
class MetricPoint:
    name: str
    value: float
    unit: str  # Powertools MetricUnit value: Milliseconds | Seconds | Count
    dimensions: dict[str, str] = field(default_factory=dict)


@dataclass
class IngestReport:
    applied: int = 0
    duplicates: int = 0
    unmatched: int = 0
    suppressed: int = 0
    poison: int = 0
    failed: int = 0
    metrics: list[MetricPoint] = field(default_factory=list)

    def absorb(self, other: IngestReport) -> None:
        """Add a part's counts (each concurrent apply writes its own report; merged in one thread)."""
        self.applied += other.applied
        self.duplicates += other.duplicates
        self.unmatched += other.unmatched
        self.suppressed += other.suppressed
        self.poison += other.poison
        self.failed += other.failed
        self.metrics.extend(other.metrics)

    def count(self, result: ApplyResult, matched: bool) -> None:
        if result.duplicate:
            self.duplicates += 1
            return
        self.applied += 1
        self.unmatched += 0 if matched else 1
        self.suppressed += 1 if result.suppressed_now else 0


def plan_for(
    services: Services, event: DeliveryEvent, message_id: str | None, receipt_id: str | None = None
) -> ApplyPlan:
    settings = services.settings
    verdict = verdict_for(event)
    if not verdict.known:
        logger.warning(
            "unknown provider outcome, treated as transient",
            extra={"event_id": event.event_id, "provider_response": event.provider_response, "kind": event.kind.value},
        )
    target = target_state(event)
    return ApplyPlan(
        message_id=message_id,
        target=target,
        allowed_from=allowed_from(target) if target is not None else frozenset(),
        receipt_id=receipt_id,
        suppress_reason=verdict.reason if verdict.action is Action.SUPPRESS else None,
        count_transient_reason=verdict.reason if verdict.action is Action.COUNT_TRANSIENT else None,
        transient_limit=settings.transient_bounce_limit,
        transient_window_seconds=settings.transient_bounce_window_days * 86_400,
    )


def _said(value: object) -> bool:
    """None, False and "" say nothing happened (0 and 0.0 are figures and stay)."""
    return value is not None and value is not False and value != ""


def ingest_event(
    services: Services, events: DeliveryEventStore, event: DeliveryEvent, report: IngestReport
) -> ApplyResult:
    now = services.clock.now()
    plan = plan_for(services, event, event.message_id, receipt_id=_receipt_id(event))
    result = events.apply(event, plan, now)
    if result.no_receipt:
        result, plan = _without_receipt(events, event, plan, now, spent=result.requests)
    report.count(result, plan.message_id is not None or plan.receipt_id is not None)
    if result.suppressed_now:
        # Event time → suppression persisted (the transaction just returned).
        lag_ms = (services.clock.now() - event.occurred_at).total_seconds() * 1000
        report.metrics.append(MetricPoint(names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS, max(lag_ms, 0.0), "Milliseconds"))
    facts = {
        "event_id": event.event_id,
        "event_source": event.source.value,
        "kind": event.kind.value,
        "message_id": plan.message_id,
        "receipt_id": plan.receipt_id,
        "recipient": event.recipient_fingerprint,
        "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
        "duplicate": result.duplicate,
        "state_applied": plan.target.value if plan.target and result.message_updated else None,
        "state_unchanged": result.prior_state,
        "suppressed_now": result.suppressed_now,
        "already_suppressed": result.already_suppressed,
        "transient_count": result.transient_count,
        "requests": result.requests,
    }
    # One line per applied event, billed by the byte: what did not happen is left out.
    logger.info("delivery event", extra={name: value for name, value in facts.items() if _said(value)})
    return result


def _receipt_id(event: DeliveryEvent) -> str | None:
    if event.message_id is None and event.source is EventSource.SMS and event.provider_message_id:
        return event.provider_message_id
    return None


def _without_receipt(
    events: DeliveryEventStore, event: DeliveryEvent, plan: ApplyPlan, now: datetime, spent: int
) -> tuple[ApplyResult, ApplyPlan]:
    """No receipt under SNS's id: match the record to the destination's last send."""
    assert event.provider_message_id is not None
    message_id, applied = events.message_for_provider_id(
        event.provider_message_id,
        event.recipient_key,
        event.occurred_at,
        SMS_SEND_WINDOW_SECONDS,
        dedupe_key=event.dedupe_key,
    )
    plan = replace(plan, message_id=message_id, receipt_id=None)
    if applied:
        # The dedupe item is written in the same transaction as everything the event derives,
        # so its presence proves the whole event is applied: no transaction.
        return ApplyResult(duplicate=True, requests=spent + 1), plan
    result = events.apply(event, plan, now)
    return replace(result, requests=spent + 1 + result.requests), plan


def ingest_sqs_body(services: Services, events: DeliveryEventStore, body: str, report: IngestReport) -> None:
    """One SES events queue message. MalformedEvent propagates: the caller leaves it for the DLQ."""
    for event in parse_sqs_body(body):
        ingest_event(services, events, event, report)


def ingest_log_record(services: Services, events: DeliveryEventStore, record: LogRecord, report: IngestReport) -> None:
    """One SMS delivery-status log event; an unreadable one is logged and skipped (retrying cannot fix it)."""
    ingest_read_record(services, events, read_log_record(record), report)


def read_log_record(record: LogRecord) -> DeliveryEvent | None:
    """The record's event, or None when it is unreadable (logged here, once)."""
    try:
        return parse_sms_record(record.message)
    except MalformedEvent as exc:
        logger.error("unreadable SMS status record", extra={"log_event_id": record.log_event_id, "error": str(exc)})
        return None


def ingest_read_record(
    services: Services, events: DeliveryEventStore, event: DeliveryEvent | None, report: IngestReport
) -> None:
    """A read record's event; an unreadable record (None) counts as poison and is skipped."""
    if event is None:
        report.poison += 1
        return
    ingest_event(services, events, event, report)
