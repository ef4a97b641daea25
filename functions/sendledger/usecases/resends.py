"""`pending` retries and the resend of a send proven absent: the same message id, through the
reset flow for a password-reset mail (a fresh token replaces the old hash), or a suppression
instead where the recipient became suppressed meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from sendledger.domain import templates
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
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
from sendledger.ports.ingestion import DueWorkStore
from sendledger.ports.messages import Expectations, MessageStore, SendIntent
from sendledger.ports.reports import CycleReport
from sendledger.ports.resets import ResetStore
from sendledger.usecases.delivery import Delivery, OutcomeRecorder
from sendledger.usecases.intents import LEASE_SECONDS
from sendledger.usecases.resets import ResetMailer
from sendledger.usecases.sms_guard import SmsGuard
from sendledger.usecases.template_catalog import TemplateCatalog

logger = Logger(child=True)

S = MessageState


@dataclass(frozen=True)
class Resender:
    """Sends a message again (a `pending` retry, an absence proven), under the same message id."""

    messages: MessageStore
    due_work: DueWorkStore
    resets: ResetStore  # a reset's mail is resent through its reset
    delivery: Delivery
    outcomes: OutcomeRecorder
    mailer: ResetMailer
    sms_guard: SmsGuard  # the owner's countries as they are now (no cap: the first attempt was counted)
    clock: Clock
    catalog: TemplateCatalog  # the version the first send recorded, retired since or not

    def retry_pending(self, message_id: str, seconds_left: Callable[[], float], report: CycleReport) -> None:
        now = self.clock.now()
        message = self.messages.get(message_id)
        if message is None:
            self.due_work.clear(message_id, DueKind.PENDING)
            return
        if message.state in (S.PENDING, S.RETRY):
            self.resend(message, seconds_left, report)
            return
        if message.state is S.SENDING:
            # A resend crashed between its intent and its outcome: what happened is unknown.
            evidence = {"decision": "unknown"}
            entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence=evidence)
            self.messages.transition(message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now))
            report.bump("lease_expired", message_id)
            return
        self.due_work.clear(message_id, DueKind.PENDING)

    def resend(self, message: Message, seconds_left: Callable[[], float], report: CycleReport) -> None:
        """Send a message proven not accepted again: same message id, suppression re-checked, the
        words its first send rendered (the version and locale it recorded, retired or not)."""
        now = self.clock.now()
        if message.reset_account_id:
            self._resend_reset(message, seconds_left, report, now)
            return
        if message.channel is Channel.SMS and message.owner:
            # The owner's country rule as it is now: a rule set since the first attempt holds.
            refused = self.sms_guard.refusal(CallerId(message.owner), message.to, now)
            if refused is not None:
                self._refuse_instead(message, refused, now, report)
                return
        version = self.catalog.recorded(CallerId(message.owner or ""), message.template)
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
        result = self.messages.transition(
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
            self._suppress_instead(message, now, report)
            return
        if result is not Transition.APPLIED:
            report.bump("resend_moved_on", message.message_id)
            return
        message.state, message.attempt = S.SENDING, attempt
        content = templates.render(version, message.channel, message.params or {}, message.template.locale)
        response = self.delivery.deliver(message, seconds_left, content)
        intent = SendIntent(
            message=message,
            first_entry=entry,
            lease_until=lease_until,
            expectations=Expectations(),
            idempotency_key=self.messages.idempotency_key_of(message.message_id),
        )
        self.outcomes.record(intent, response)
        report.bump(f"resent_{message.state.value}", message.message_id)

    def _resend_reset(
        self, message: Message, seconds_left: Callable[[], float], report: CycleReport, now: datetime
    ) -> None:
        assert message.reset_account_id is not None
        record = self.resets.get(CallerId(message.owner), message.reset_account_id) if message.owner else None
        if (
            record is None
            or record.message_id != message.message_id
            or record.state != "active"
            or record.expires_at <= now
        ):
            # The reset this mail belonged to is gone (consumed, replaced, expired): the mail is
            # withdrawn for good, never left waiting.
            evidence: dict[str, object] = {
                "reason": "reset no longer active",
                "reset_state": record.state if record else None,
            }
            self._cancel(message, evidence, frozenset({S.PENDING, S.RETRY, S.RECEIVED}), now)
            report.bump("reset_mail_cancelled", message.message_id)
            return
        # send_reset_mail re-checks suppression in its own write (and settles the mail suppressed).
        report.bump(self.mailer.send(record, seconds_left).value, message.message_id)

    def _refuse_instead(self, message: Message, refused: SmsRefusal, now: datetime, report: CycleReport) -> None:
        """Withdrawn for good, the refusal its evidence."""
        evidence: dict[str, object] = {"decision": "cancelled", "sms_refused": refusal_evidence(refused)}
        self._cancel(message, evidence, frozenset({S.PENDING, S.RETRY}), now)
        report.bump(f"sms_refused_{refused.reason.value}", message.message_id)

    def _cancel(
        self, message: Message, evidence: dict[str, object], waiting: frozenset[MessageState], now: datetime
    ) -> None:
        """Withdrawn for good (cancelled: never accepted by a provider) while still `waiting`;
        one that has moved on since keeps its state and loses only its retry marker."""
        entry = HistoryEntry(at=now, type=HistoryType.CANCELLED, state=S.CANCELLED, evidence=evidence, step=3)
        if self.messages.transition(message.message_id, waiting, S.CANCELLED, [entry], None) is not Transition.APPLIED:
            self.due_work.clear(message.message_id, DueKind.PENDING)

    def _suppress_instead(self, message: Message, now: datetime, report: CycleReport) -> None:
        entry = HistoryEntry(
            at=now,
            type=HistoryType.DECIDED,
            state=S.SUPPRESSED,
            evidence={"eligibility": "suppressed", "decision": "suppressed"},
        )
        self.messages.transition(message.message_id, predecessors(S.SUPPRESSED), S.SUPPRESSED, [entry], None)
        report.bump("resend_suppressed", message.message_id)
