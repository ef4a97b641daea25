"""Apply delivery events: the one idempotent routine every provider's events go through.

Cost per event: one TransactWriteItems. Most events name the message by the id the send gave
the provider (a tag, a custom argument); an SMS status record may name only the provider's
message id, so its outcome lands on the send's receipt under that id.
A duplicate costs its one cancelled transaction. A status record with no receipt (the Publish
answer was never recorded: timed out, or the outcome write lost the race to an event) costs the
cancelled transaction, one BatchGetItem (the destination's last send) and the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain import test_mode
from sendledger.domain.event_plan import EventPlan, plan_event
from sendledger.domain.events import DeliveryEvent, EventKind
from sendledger.domain.sms_guardrails import SmsRefusalReason
from sendledger.domain.suppression_rules import TransientPolicy, verdict_for
from sendledger.domain.values import value
from sendledger.ports.ingestion import (
    ApplyResult,
    DeliveryEventStore,
    DueWorkStore,
    EscalationQueue,
    EscalationTimers,
)
from sendledger.ports.providers import AcceptanceLookup, EventLane
from sendledger.usecases.context import Services

logger = Logger(child=True)

# A status record names the destination; it proves the outcome of a send to that number whose
# provider message id we never learned (a timed-out publish) when it was published this soon after it.
SMS_SEND_WINDOW_SECONDS = 300
SMS_KINDS = frozenset({EventKind.SMS_SUCCESS, EventKind.SMS_FAILURE})


@dataclass
class Pipeline:
    """What the poller and the event handlers need beyond the send path's Services."""

    services: Services
    events: DeliveryEventStore
    due_work: DueWorkStore
    escalation_timers: EscalationTimers
    # How each enabled provider's events come in, run by every poll cycle in this order.
    lanes: list[EventLane] = field(default_factory=list)
    escalations: EscalationQueue | None = None
    # By provider name: the API that finds a timed-out send again (usecases/resolve_unknown.py).
    lookups: dict[str, AcceptanceLookup] = field(default_factory=dict)

    def lane(self, name: str) -> EventLane:
        """The lane of that name (the poll step's name)."""
        for lane in self.lanes:
            if lane.name == name:
                return lane
        raise KeyError(f"no lane {name!r} in this pipeline")


@value
class MetricPoint:
    name: str
    value: float
    unit: str  # Powertools MetricUnit value: Milliseconds | Seconds | Count
    dimensions: dict[str, str] = field(default_factory=dict)


def sms_refused_metrics(reason: SmsRefusalReason, count: int = 1) -> list[MetricPoint]:
    """Refused SMS: by reason, and in the total the alarm watches (no caller dimension: the log
    line names the caller, and a dimension per caller would be a metric per caller)."""
    return [
        MetricPoint(names.METRIC_SMS_REFUSED, count, "Count", {"reason": reason.value}),
        MetricPoint(names.METRIC_SMS_REFUSED, count, "Count"),
    ]


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
) -> EventPlan:
    """The domain's plan of what the event writes (domain/event_plan.py), under this deployment's rules."""
    settings = services.settings
    verdict = verdict_for(event)
    if not verdict.known:
        logger.warning(
            "unknown provider outcome, treated as transient",
            extra={"event_id": event.event_id, "provider_response": event.provider_response, "kind": event.kind.value},
        )
    policy = TransientPolicy(settings.transient_bounce_limit, timedelta(days=settings.transient_bounce_window_days))
    now = services.clock.now()
    return plan_event(event, verdict, policy, now, message_id=message_id, receipt_id=receipt_id)


def _said(value: object) -> bool:
    """None, False and "" say nothing happened (0 and 0.0 are figures and stay)."""
    return value is not None and value is not False and value != ""


def ingest_event(
    services: Services, events: DeliveryEventStore, event: DeliveryEvent, report: IngestReport
) -> ApplyResult:
    # A simulated send's event (a test caller's) suppresses in the caller's namespace only.
    event = test_mode.scoped(event)
    plan = plan_for(services, event, event.message_id, receipt_id=_receipt_id(event))
    now = plan.at
    result = events.apply(plan)
    if result.no_receipt:
        result, plan = _without_receipt(services, events, event, spent=result.requests)
    report.count(result, plan.message_id is not None or plan.receipt_id is not None)
    if result.suppressed_now:
        # Event time → suppression persisted (the transaction just returned).
        lag_ms = (services.clock.now() - event.occurred_at).total_seconds() * 1000
        report.metrics.append(MetricPoint(names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS, max(lag_ms, 0.0), "Milliseconds"))
    facts = {
        "event_id": event.event_id,
        "event_source": event.source,
        "kind": event.kind.value,
        "message_id": plan.message_id,
        "receipt_id": plan.receipt_id,
        "recipient": event.recipient_fingerprint,
        "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
        "duplicate": result.duplicate,
        "state_applied": plan.proves.target.value if plan.proves and result.message_updated else None,
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
    """An SMS status that does not name our message lands on the receipt its send's outcome
    wrote under the provider's message id."""
    if event.message_id is None and event.provider_message_id and event.kind in SMS_KINDS:
        return event.provider_message_id
    return None


def _without_receipt(
    services: Services, events: DeliveryEventStore, event: DeliveryEvent, spent: int
) -> tuple[ApplyResult, EventPlan]:
    """No receipt under the provider's id: match the record to the destination's last send."""
    assert event.provider_message_id is not None
    message_id, applied = events.message_for_provider_id(
        event.provider_message_id,
        event.recipient_key,
        event.occurred_at,
        SMS_SEND_WINDOW_SECONDS,
        dedupe_key=event.dedupe_key,
    )
    plan = plan_for(services, event, message_id)
    if applied:
        # The dedupe item is written in the same transaction as everything the event derives,
        # so its presence proves the whole event is applied: no transaction.
        return ApplyResult(duplicate=True, requests=spent + 1), plan
    result = events.apply(plan)
    return replace(result, requests=spent + 1 + result.requests), plan


def ingest_read_record(
    services: Services, events: DeliveryEventStore, event: DeliveryEvent | None, report: IngestReport
) -> None:
    """A read record's event; an unreadable record (None) counts as poison and is skipped."""
    if event is None:
        report.poison += 1
        return
    ingest_event(services, events, event, report)
