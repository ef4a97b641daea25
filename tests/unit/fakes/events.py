"""Applying delivery events once each: the domain's plans, written as the DynamoDB store writes them.

The store (adapters/dynamodb/events.py) writes a plan optimistically in one request; when a
condition fails it learns what the items hold and writes the plan the domain narrows from that.
This fake checks the same conditions against its items and follows the same protocol, so it
reaches the same results (`requests` included) without a rule of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sendledger.domain.event_plan import EventPlan, RecipientSeen
from sendledger.domain.messages import DueKind
from sendledger.ports.ingestion import ApplyResult, SmsMatch, SmsSendFound
from tests.unit.fakes import receipts, recipients
from tests.unit.fakes.history import ms
from tests.unit.fakes.receipts import Receipt, ReceiptKey
from tests.unit.fakes.state import LedgerState

MAX_ATTEMPTS = 4


@dataclass(frozen=True)
class Refusals:
    """What one attempt's failed conditions showed (empty: written)."""

    duplicate: bool = False
    no_receipt: bool = False
    move_refused_by: str | None = None
    move_refused: bool = False
    recipient: RecipientSeen | None = None

    @property
    def refused(self) -> bool:
        return self.duplicate or self.no_receipt or self.move_refused or self.recipient is not None


class FakeDeliveryEvents:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def apply(self, plan: EventPlan) -> ApplyResult:
        with self.db.lock:
            for requests in range(1, MAX_ATTEMPTS + 1):
                refusals = self._conditions(plan)
                if refusals.duplicate:
                    return ApplyResult(duplicate=True, requests=requests)
                if refusals.no_receipt:
                    return ApplyResult(duplicate=False, no_receipt=True, requests=requests)
                if refusals.refused:
                    plan = plan.narrowed(
                        move_refused_by=refusals.move_refused_by,
                        refused=refusals.move_refused,
                        recipient=refusals.recipient,
                    )
                    continue
                self._write(plan)
                return ApplyResult(
                    duplicate=False,
                    message_updated=plan.move is not None,
                    prior_state=plan.prior_state,
                    suppressed_now=plan.suppression is not None,
                    already_suppressed=plan.already_suppressed,
                    transient_count=len(plan.transient.times) if plan.transient is not None else None,
                    requests=requests,
                )
        raise AssertionError("a plan the store would keep narrowing")

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> SmsSendFound:
        with self.db.lock:
            applied = dedupe_key is not None and dedupe_key in self.db.unmatched_events
            receipt = self.db.receipts.get(receipts.of_sms(provider_message_id))
            if receipt is not None and receipt.message_id is not None:
                return SmsSendFound(SmsMatch.PROVIDER_ID, receipt.message_id, applied, requests=1)
            recent = recipients.recent_sends(self.db, recipient_key) if recipient_key else []
            if not recent:
                return SmsSendFound(SmsMatch.NONE, None, applied, requests=1)
            named = {
                message_id: self.db.messages[message_id].message.provider_message_id
                for message_id, _ in recent
                if message_id in self.db.messages
            }
            for message_id, _ in recent:
                if named.get(message_id) == provider_message_id:
                    return SmsSendFound(SmsMatch.PROVIDER_ID, message_id, applied, requests=2)
            window = timedelta(seconds=window_seconds)
            for message_id, sent_at in recent:
                if message_id in named and named[message_id] is None and sent_at <= occurred_at <= sent_at + window:
                    return SmsSendFound(SmsMatch.UNKNOWN_ID, message_id, applied, requests=2)
            return SmsSendFound(SmsMatch.NONE, None, applied, last_send_at=recent[0][1], requests=2)

    def _conditions(self, plan: EventPlan) -> Refusals:
        """The store's conditions, against the items as they are."""
        event = plan.event
        key = _target_key(plan)
        receipt = self.db.receipts.get(key) if key else None
        if key is None:
            if event.dedupe_key in self.db.unmatched_events:
                return Refusals(duplicate=True)
        elif receipt is not None and receipt.history.has_event(event.dedupe_key):
            return Refusals(duplicate=True)
        elif receipt is None and key[0] == receipts.OF_SMS and plan.message_id is None:
            return Refusals(no_receipt=True)  # only its send's writer knows whose it is
        move_refused = plan.move is not None and not _may_move(receipt, plan)
        held = receipt.state.value if move_refused and receipt and receipt.state else None
        return Refusals(move_refused_by=held, move_refused=move_refused, recipient=self._recipient_refusal(plan))

    def _recipient_refusal(self, plan: EventPlan) -> RecipientSeen | None:
        """The recipient item, when the plan's condition on it fails (suppressed, or another window)."""
        key = plan.event.recipient_key
        if key is None or (plan.suppression is None and plan.transient is None):
            return None
        item = recipients.item_of(self.db, key)
        seen = RecipientSeen(item.suppressed, list(item.transient_times), item.transient_revision)
        if plan.suppression is not None and item.suppressed:
            return seen
        if plan.transient is not None and (plan.transient.known_revision or 0) != item.transient_revision:
            return seen
        return None

    def _write(self, plan: EventPlan) -> None:
        key = _target_key(plan)
        if key is None:
            self.db.unmatched_events[plan.event.dedupe_key] = ms(plan.at)
        else:
            self._write_target(key, plan)
        self._write_recipient(plan)

    def _write_target(self, key: ReceiptKey, plan: EventPlan) -> None:
        receipt = self.db.receipts.setdefault(key, Receipt(key))
        if plan.message_id and receipt.message_id is None:
            receipt.message_id = plan.message_id
        if plan.event.provider_message_id and receipt.provider_message_id is None:
            receipt.provider_message_id = plan.event.provider_message_id
        move = plan.move
        if move is not None:
            receipt.state, receipt.updated_at = move.target, ms(plan.at)
            receipt.reason = move.reason
            receipt.due = (DueKind.OUTCOME, plan.at) if move.outcome_marker else None
        receipt.history.append(plan.entry, derived_from=plan.event.dedupe_key)

    def _write_recipient(self, plan: EventPlan) -> None:
        key = plan.event.recipient_key
        if key is None or (plan.suppression is None and plan.transient is None):
            return
        item = recipients.item_of(self.db, key)
        if plan.transient is not None:
            item.transient_times = [ms(moment) for moment in plan.transient.times]
            item.transient_revision += 1
        if plan.suppression is not None and plan.recipient_entry is not None:
            item.suppress(plan.suppression.reason, plan.event.dedupe_key, plan.at)
            item.history.append(plan.recipient_entry)


def _target_key(plan: EventPlan) -> ReceiptKey | None:
    if plan.receipt_id:
        return receipts.of_sms(plan.receipt_id)
    return receipts.of_message(plan.message_id) if plan.message_id else None


def _may_move(receipt: Receipt | None, plan: EventPlan) -> bool:
    """The receipt's state condition: a receipt has no state until an event proves one."""
    assert plan.move is not None
    return receipt is None or receipt.state is None or receipt.state in plan.move.allowed_from
