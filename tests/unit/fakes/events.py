"""Applying delivery events once each, with the results the DynamoDB adapter reaches.

The adapter writes optimistically and narrows its write by what a failed condition hands back
(adapters/dynamodb/events.py); this fake decides from the items at once and reports the same
result, `requests` included (2 when the adapter's first write is refused and retried).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sendledger.domain import evidence
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import DueKind
from sendledger.domain.suppression_rules import TransientPolicy
from sendledger.ports.ingestion import ApplyPlan, ApplyResult
from tests.unit.fakes import receipts, recipients
from tests.unit.fakes.history import ms
from tests.unit.fakes.receipts import Receipt, ReceiptKey
from tests.unit.fakes.state import LedgerState


@dataclass(frozen=True)
class RecipientPart:
    suppress: str | None = None  # the reason, when this event suppresses the recipient
    window: list[datetime] | None = None  # the transient window, when it counts a transient bounce
    already_suppressed: bool = False
    refused_first: bool = False  # the adapter's optimistic first write fails on the recipient


class FakeDeliveryEvents:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def apply(self, event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> ApplyResult:
        with self.db.lock:
            key = _target_key(plan)
            receipt = self.db.receipts.get(key) if key else None
            if key is not None and receipt is None and key[0] == receipts.OF_SMS:
                return ApplyResult(duplicate=False, no_receipt=True)  # nothing written
            if receipt is not None and receipt.history.has_event(event.dedupe_key):
                return ApplyResult(duplicate=True)
            if key is None and event.dedupe_key in self.db.unmatched_events:
                return ApplyResult(duplicate=True)
            wants_state = key is not None and plan.target is not None
            change_state = wants_state and _may_move(receipt, plan)
            refused = wants_state and not change_state
            prior_state = receipt.state.value if refused and receipt and receipt.state else None
            part = self._recipient_part(event, plan)
            if key is None:
                self.db.unmatched_events[event.dedupe_key] = ms(now)
            else:
                self._write_target(key, event, plan, now, change_state, prior_state, part)
            self._write_recipient(event, part, now)
            return ApplyResult(
                duplicate=False,
                message_updated=change_state,
                prior_state=prior_state,
                suppressed_now=part.suppress is not None,
                already_suppressed=part.already_suppressed,
                transient_count=len(part.window) if part.window is not None else None,
                requests=2 if part.refused_first or refused else 1,
            )

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> tuple[str | None, bool]:
        with self.db.lock:
            applied = dedupe_key is not None and dedupe_key in self.db.unmatched_events
            receipt = self.db.receipts.get(receipts.of_sms(provider_message_id))
            if receipt is not None:
                return receipt.message_id, applied
            if recipient_key is None:
                return None, applied
            recipient = recipients.state_of(self.db, recipient_key)
            sent_at = recipient.last_send_at
            if sent_at is not None and sent_at <= occurred_at <= sent_at + timedelta(seconds=window_seconds):
                return recipient.last_message_id, applied
            return None, applied

    def _recipient_part(self, event: DeliveryEvent, plan: ApplyPlan) -> RecipientPart:
        if event.recipient_key is None:
            return RecipientPart()
        recipient = recipients.state_of(self.db, event.recipient_key)
        suppressed = recipient.suppression.suppressed
        if plan.suppress_reason is not None:
            if suppressed:
                return RecipientPart(already_suppressed=True, refused_first=True)
            return RecipientPart(suppress=plan.suppress_reason)
        if plan.count_transient_reason is None:
            return RecipientPart()
        policy = TransientPolicy(plan.transient_limit, timedelta(seconds=plan.transient_window_seconds))
        # The adapter first assumes no earlier transient bounce (no revision) and reads back on refusal.
        optimistic = policy.window_after([], event.occurred_at)
        refused = recipient.transient_revision > 0 or (suppressed and policy.reached(optimistic))
        if refused and suppressed:
            return RecipientPart(already_suppressed=True, refused_first=True)
        window = policy.window_after(recipient.transient_times, event.occurred_at)
        reason = plan.count_transient_reason if policy.reached(window) else None
        return RecipientPart(suppress=reason, window=window, refused_first=refused)

    def _write_target(
        self,
        key: ReceiptKey,
        event: DeliveryEvent,
        plan: ApplyPlan,
        now: datetime,
        change_state: bool,
        prior_state: str | None,
        part: RecipientPart,
    ) -> None:
        receipt = self.db.receipts.setdefault(key, Receipt(key))
        if plan.message_id and receipt.message_id is None:
            receipt.message_id = plan.message_id
        if event.provider_message_id and receipt.provider_message_id is None:
            receipt.provider_message_id = event.provider_message_id
        if change_state:
            assert plan.target is not None
            receipt.state, receipt.updated_at = plan.target, ms(now)
            if plan.target in evidence.FAILED_FOR_GOOD:
                # Escalation may act before the deadline once a message failed for good.
                receipt.reason = evidence.reason_of(event)
                receipt.due = None if event.escalates is False else (DueKind.OUTCOME, now)
            else:
                receipt.reason, receipt.due = None, None
        entry = evidence.event_entry(
            event, plan.target, change_state, prior_state, now, suppressing=part.suppress is not None
        )
        receipt.history.append(entry, derived_from=event.dedupe_key)

    def _write_recipient(self, event: DeliveryEvent, part: RecipientPart, now: datetime) -> None:
        if event.recipient_key is None or (part.suppress is None and part.window is None):
            return
        item = recipients.item_of(self.db, event.recipient_key)
        if part.window is not None:
            item.transient_times = [ms(moment) for moment in part.window]
            item.transient_revision += 1
        if part.suppress is not None:
            item.suppress(part.suppress, event.dedupe_key, now)
            item.history.append(evidence.suppression_entry(event, part.suppress, now))


def _target_key(plan: ApplyPlan) -> ReceiptKey | None:
    if plan.message_id:
        return receipts.of_message(plan.message_id)
    return receipts.of_sms(plan.receipt_id) if plan.receipt_id else None


def _may_move(receipt: Receipt | None, plan: ApplyPlan) -> bool:
    """The receipt's state condition: a message's own receipt may start without a state."""
    if receipt is None or receipt.state is None:
        return receipt is None or not receipt.written_by_outcome
    return receipt.state in plan.allowed_from
