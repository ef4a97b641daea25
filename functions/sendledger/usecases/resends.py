"""`pending` retries and the resend of a send proven absent: the same message id, through the
reset flow for a password-reset mail (a fresh token replaces the old hash), or a suppression
instead where the recipient became suppressed meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from sendledger.domain import templates
from sendledger.domain.callers import CallerId
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    Transition,
    predecessors,
)
from sendledger.domain.recipients import Channel, fingerprint_of
from sendledger.domain.sms_guardrails import SmsRefusal, refusal_evidence
from sendledger.ports.messages import Expectations, SendIntent
from sendledger.usecases.delivery import deliver, record_provider_outcome
from sendledger.usecases.due_report import Counter
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.intents import LEASE_SECONDS
from sendledger.usecases.resets import send_reset_mail
from sendledger.usecases.sms_guard import sms_refusal
from sendledger.usecases.template_catalog import SHIPPED, TemplateCatalog

logger = Logger(child=True)

S = MessageState


def retry_pending(
    pipeline: Pipeline,
    message_id: str,
    seconds_left: Callable[[], float],
    report: Counter,
    catalog: TemplateCatalog = SHIPPED,
) -> None:
    services, due_work = pipeline.services, pipeline.due_work
    now = services.clock.now()
    message = services.messages.get(message_id)
    if message is None:
        due_work.clear(message_id, DueKind.PENDING)
        return
    if message.state in (S.PENDING, S.RETRY):
        resend(pipeline, message, seconds_left, report, catalog)
        return
    if message.state is S.SENDING:
        # A resend crashed between its intent and its outcome: what happened is unknown.
        entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence={"decision": "unknown"})
        services.messages.transition(message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now))
        report.bump("lease_expired", message_id)
        return
    due_work.clear(message_id, DueKind.PENDING)


def resend(
    pipeline: Pipeline,
    message: Message,
    seconds_left: Callable[[], float],
    report: Counter,
    catalog: TemplateCatalog = SHIPPED,
) -> None:
    """Send a message proven not accepted again: same message id, suppression re-checked, the
    words its first send rendered (the version and locale it recorded, retired or not)."""
    services = pipeline.services
    now = services.clock.now()
    if message.reset_account_id:
        _resend_reset(pipeline, message, seconds_left, report, now, catalog)
        return
    if message.channel is Channel.SMS and message.owner:
        # The owner's country rule as it is now: a rule set since the first attempt holds.
        default = services.settings.sms_default_countries
        refused = sms_refusal(services.caller_settings, default, CallerId(message.owner), message.to, None, now)
        if refused is not None:
            _refuse_instead(pipeline, message, refused, now, report)
            return
    version = catalog.recorded(CallerId(message.owner or ""), message.template)
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
    content = templates.render(version, message.channel, message.params or {}, message.template.locale)
    response = deliver(services, message, seconds_left, content)
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
    pipeline: Pipeline,
    message: Message,
    seconds_left: Callable[[], float],
    report: Counter,
    now: datetime,
    catalog: TemplateCatalog,
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
    report.bump(send_reset_mail(services, record, seconds_left, catalog).value, message.message_id)


def _refuse_instead(pipeline: Pipeline, message: Message, refused: SmsRefusal, now: datetime, report: Counter) -> None:
    """Withdrawn for good (cancelled: never accepted by a provider), the refusal its evidence."""
    entry = HistoryEntry(
        at=now,
        type=HistoryType.CANCELLED,
        state=S.CANCELLED,
        evidence={"decision": "cancelled", "sms_refused": refusal_evidence(refused)},
        step=3,
    )
    moved = pipeline.services.messages.transition(
        message.message_id, frozenset({S.PENDING, S.RETRY}), S.CANCELLED, [entry], None
    )
    if moved is not Transition.APPLIED:
        pipeline.due_work.clear(message.message_id, DueKind.PENDING)
    report.bump(f"sms_refused_{refused.reason.value}", message.message_id)


def _suppress_instead(pipeline: Pipeline, message: Message, now: datetime, report: Counter) -> None:
    entry = HistoryEntry(
        at=now,
        type=HistoryType.DECIDED,
        state=S.SUPPRESSED,
        evidence={"eligibility": "suppressed", "decision": "suppressed"},
    )
    pipeline.services.messages.transition(message.message_id, predecessors(S.SUPPRESSED), S.SUPPRESSED, [entry], None)
    report.bump("resend_suppressed", message.message_id)
