"""Due work: expired in-flight leases, `unknown` sends (lookup before retry), `pending` retries.

`unknown` is evidence, not permission (never a blind resend). An ingested SES event tagged with the
message id, or an SMS status record for the destination, already moved the message (the event
apply removes its due marker). Otherwise absence counts as proven only once the source
watermark has passed the send time plus UNKNOWN_GRACE_SECONDS; then the message is resent with
the same message id. With the watermark behind it stays `unknown`, and becomes `unresolved`
after UNKNOWN_MAX_AGE_SECONDS. A password-reset message is resent through the reset flow, so a
fresh token replaces the old hash (never two valid tokens).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from aws_lambda_powertools import Logger

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    Transition,
    predecessors,
)
from sendledger.domain.recipients import fingerprint_of
from sendledger.ports.messages import Expectations, SendIntent
from sendledger.ports.providers import Finding, LookupResult
from sendledger.usecases.delivery import deliver, record_provider_outcome, status_due
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.intents import LEASE_SECONDS
from sendledger.usecases.resets import send_reset_mail
from sendledger.usecases.send_command import source_for

logger = Logger(child=True)

S = MessageState
BATCH = 100
SAFETY_SECONDS = 8.0


@dataclass(frozen=True)
class Since:
    """A message an earlier event resolved: its state now, and when it left `unknown` (its
    marker falls due later, and the cycle says when the resolution happened, not that it did now)."""

    state: MessageState
    at: datetime


class Counter(Protocol):
    def bump(self, what: str, message_id: str | None = None, since: Since | None = None) -> None: ...


def resolve_due_work(pipeline: Pipeline, seconds_left: Callable[[], float], report: Counter) -> None:
    now = pipeline.services.clock.now()
    due_work = pipeline.due_work
    for item in due_work.items(DueKind.INFLIGHT, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        expire_lease(pipeline, item.message_id, report)
    for item in due_work.items(DueKind.UNKNOWN, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        resolve_unknown(pipeline, item.message_id, seconds_left, report)
    for item in due_work.items(DueKind.PENDING, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        retry_pending(pipeline, item.message_id, seconds_left, report)


def expire_lease(pipeline: Pipeline, message_id: str, report: Counter) -> None:
    """The sender crashed (or timed out) between intent and outcome: the send may have happened."""
    now = pipeline.services.clock.now()
    entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence={"decision": "unknown"})
    result = pipeline.services.messages.transition(
        message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now)
    )
    if result is not Transition.APPLIED:
        pipeline.due_work.clear(message_id, DueKind.INFLIGHT)
    report.bump("lease_expired" if result is Transition.APPLIED else "lease_moved_on", message_id)


def resolve_unknown(pipeline: Pipeline, message_id: str, seconds_left: Callable[[], float], report: Counter) -> None:
    services, due_work = pipeline.services, pipeline.due_work
    settings, now = services.settings, services.clock.now()
    message = services.messages.get(message_id)
    if message is None or message.state is not S.UNKNOWN:
        due_work.clear(message_id, DueKind.UNKNOWN)
        left_at = _left_unknown_at(message) if message is not None else None
        since = Since(message.state, left_at) if message is not None and left_at is not None else None
        report.bump("unknown_already_resolved", message_id, since)
        return
    source = source_for(message)
    watermark = services.poller_state.watermark(source)
    sent_at = max(message.created_at, message.updated_at)
    grace = timedelta(seconds=settings.unknown_grace_seconds)
    evidence: dict[str, object] = {
        "source": source,
        "watermark": iso(watermark) if watermark else None,
        "watermark_age_seconds": round((now - watermark).total_seconds(), 3) if watermark else None,
        "sent_at": iso(sent_at),
        "grace_seconds": settings.unknown_grace_seconds,
        "attempt": message.attempt,
    }
    log = {"message_id": message_id, "recipient": fingerprint_of(message.recipient_key), **evidence}
    lookup = _lookup(pipeline, message, evidence)
    if lookup is not None and lookup.found:
        accept_found(pipeline, message, lookup, evidence, report)
        return
    # The provider's index may lag the send: its "not found" counts only after the same grace.
    absent_by_lookup = lookup is not None and lookup.finding is Finding.NOT_FOUND and now > sent_at + grace
    if absent_by_lookup or (watermark is not None and watermark > sent_at + grace):
        # Every event the source emitted for this send is applied, and none proved acceptance.
        entry = HistoryEntry(
            at=now, type=HistoryType.ABSENCE_PROVEN, state=S.RETRY, evidence={**evidence, "decision": "retry"}
        )
        if (
            services.messages.transition(
                message_id, frozenset({S.UNKNOWN}), S.RETRY, [entry], (DueKind.PENDING, now), unless_evidence=True
            )
            is not Transition.APPLIED
        ):
            report.bump("unknown_moved_on", message_id)
            return
        logger.info("unknown send: absence proven, resending with the same message id", extra=log)
        message.state = S.RETRY
        report.bump("absence_proven", message_id)
        resend(pipeline, message, seconds_left, report)
        return
    if now - message.created_at > timedelta(seconds=settings.unknown_max_age_seconds):
        entry = HistoryEntry(
            at=now, type=HistoryType.UNRESOLVED, state=S.UNRESOLVED, evidence={**evidence, "decision": "unresolved"}
        )
        services.messages.transition(message_id, frozenset({S.UNKNOWN}), S.UNRESOLVED, [entry], None)
        logger.warning("unknown send unresolved: watermark never passed it", extra=log)
        report.bump("unresolved", message_id)
        return
    logger.info("unknown send: watermark behind, staying unknown", extra=log)
    report.bump("unknown_waiting", message_id)


def _left_unknown_at(message: Message) -> datetime | None:
    """When the message last left `unknown` (the event that resolved it), from its history."""
    left_at, unknown = None, False
    for entry in message.history:
        if entry.state is S.UNKNOWN:
            left_at, unknown = None, True
        elif unknown and entry.state is not None and left_at is None:
            left_at = entry.at
    return left_at


def _lookup(pipeline: Pipeline, message: Message, evidence: dict[str, object]) -> LookupResult | None:
    """Ask the message's own provider's lookup API, when it has one (None: it has none).

    Only the provider that carried it: another provider's "not found" proves nothing.
    """
    lookup = pipeline.lookups.get(message.provider)
    if lookup is None or message.test:  # a simulated send: the provider never saw it, and is not asked
        return None
    result = lookup.lookup(message)
    evidence["lookup"] = result.finding.value
    return result


def accept_found(
    pipeline: Pipeline, message: Message, lookup: LookupResult, evidence: dict[str, object], report: Counter
) -> None:
    """The provider's lookup found the timed-out send: accepted, its id recorded, nothing resent."""
    services = pipeline.services
    now = services.clock.now()
    found = {"provider_message_id": lookup.provider_message_id, "provider_status": lookup.status}
    entry = HistoryEntry(
        at=now,
        type=HistoryType.PROVIDER_LOOKUP,
        state=S.ACCEPTED,
        evidence={**evidence, **found, "decision": "accepted"},
    )
    result = services.messages.transition(
        message.message_id,
        frozenset({S.UNKNOWN}),
        S.ACCEPTED,
        [entry],
        status_due(message, services.settings, now),  # found: asked for its status from now on
        provider_message_id=lookup.provider_message_id,
    )
    logger.info(
        "unknown send: the provider's lookup found it, nothing is resent",
        extra={"message_id": message.message_id, "provider_message_id": lookup.provider_message_id},
    )
    report.bump("unknown_found_by_lookup" if result is Transition.APPLIED else "unknown_moved_on", message.message_id)


def retry_pending(pipeline: Pipeline, message_id: str, seconds_left: Callable[[], float], report: Counter) -> None:
    services, due_work = pipeline.services, pipeline.due_work
    now = services.clock.now()
    message = services.messages.get(message_id)
    if message is None:
        due_work.clear(message_id, DueKind.PENDING)
        return
    if message.state in (S.PENDING, S.RETRY):
        resend(pipeline, message, seconds_left, report)
        return
    if message.state is S.SENDING:
        # A resend crashed between its intent and its outcome: what happened is unknown.
        entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence={"decision": "unknown"})
        services.messages.transition(message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now))
        report.bump("lease_expired", message_id)
        return
    due_work.clear(message_id, DueKind.PENDING)


def resend(pipeline: Pipeline, message: Message, seconds_left: Callable[[], float], report: Counter) -> None:
    """Send a message proven not accepted again: same message id, suppression re-checked."""
    services = pipeline.services
    now = services.clock.now()
    if message.reset_account_id:
        _resend_reset(pipeline, message, seconds_left, report, now)
        return
    attempt = message.attempt + 1
    entry = HistoryEntry(
        at=now,
        type=HistoryType.RESEND,
        state=S.SENDING,
        evidence={
            "attempt": attempt,
            "from_state": message.state.value,
            "recipient": fingerprint_of(message.recipient_key),
        },
    )
    lease_until = now + timedelta(seconds=LEASE_SECONDS)
    result = services.messages.transition(
        message.message_id,
        predecessors(S.SENDING),
        S.SENDING,
        [entry],
        (DueKind.INFLIGHT, lease_until),
        attempt=attempt,
        unsuppressed=message.recipient_key,
        unless_evidence=True,  # a late event for the earlier attempt proves it was accepted
    )
    if result is Transition.SUPPRESSED:
        _suppress_instead(pipeline, message, now, report)
        return
    if result is not Transition.APPLIED:
        report.bump("resend_moved_on", message.message_id)
        return
    message.state, message.attempt = S.SENDING, attempt
    response = deliver(services, message, seconds_left)
    intent = SendIntent(
        message=message,
        first_entry=entry,
        lease_until=lease_until,
        expectations=Expectations(),
        idempotency_key=services.messages.idempotency_key_of(message.message_id),
    )
    record_provider_outcome(services, intent, response)
    report.bump(f"resent_{message.state.value}", message.message_id)


def _resend_reset(
    pipeline: Pipeline, message: Message, seconds_left: Callable[[], float], report: Counter, now: datetime
) -> None:
    services, due_work = pipeline.services, pipeline.due_work
    assert message.reset_account_id is not None
    record = services.resets.get(CallerId(message.owner), message.reset_account_id) if message.owner else None
    if (
        record is None
        or record.message_id != message.message_id
        or record.state != "active"
        or record.expires_at <= now
    ):
        # The reset this mail belonged to is gone (consumed, replaced, expired): the mail is
        # withdrawn for good, never left waiting.
        entry = HistoryEntry(
            at=now,
            type=HistoryType.CANCELLED,
            state=S.CANCELLED,
            evidence={"reason": "reset no longer active", "reset_state": record.state if record else None},
            step=3,
        )
        if (
            services.messages.transition(
                message.message_id, frozenset({S.PENDING, S.RETRY, S.RECEIVED}), S.CANCELLED, [entry], None
            )
            is not Transition.APPLIED
        ):
            due_work.clear(message.message_id, DueKind.PENDING)
        report.bump("reset_mail_cancelled", message.message_id)
        return
    # send_reset_mail re-checks suppression in its own write (and settles the mail suppressed).
    report.bump(send_reset_mail(services, record, seconds_left).value, message.message_id)


def _suppress_instead(pipeline: Pipeline, message: Message, now: datetime, report: Counter) -> None:
    entry = HistoryEntry(
        at=now,
        type=HistoryType.DECIDED,
        state=S.SUPPRESSED,
        evidence={"eligibility": "suppressed", "decision": "suppressed"},
    )
    pipeline.services.messages.transition(message.message_id, predecessors(S.SUPPRESSED), S.SUPPRESSED, [entry], None)
    report.bump("resend_suppressed", message.message_id)
