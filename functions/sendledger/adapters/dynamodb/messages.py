"""The message item: a send's intent, its key's idempotency record, state and history.

One item carries all three so that a send writes it once (the intent) and updates it once
(the outcome), and a replay is answered by the item its intent collides with.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from sendledger.adapters.dynamodb import evidence_index, history, receipts, recipients
from sendledger.adapters.dynamodb.expressions import Expression, Item, Update
from sendledger.adapters.dynamodb.keys import (
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RECEIPT_SK,
    RECIPIENT_SK,
    message_pk,
    receipt_pk,
    recipient_pk,
)
from sendledger.adapters.dynamodb.message_items import (
    PARAMS,
    PARAMS_DEFLATED,
    RESPONSE,
    answer,
    escalation_item,
    message_from,
    message_item,
    record_from,
)
from sendledger.adapters.dynamodb.resets import reset_from, reset_item
from sendledger.adapters.dynamodb.states import STATE, set_due, state_in
from sendledger.adapters.dynamodb.table import (
    TRANSACTION_CONFLICT,
    Cancelled,
    ConditionFailed,
    Table,
    Transaction,
    transaction_conflict,
)
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.export_window import Position, Window
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    Message,
    MessageState,
    Transition,
    keeps_params,
    predecessors,
)
from sendledger.domain.recipients import Channel
from sendledger.ports.messages import CreatedPage, IntentConflict, Outcome, SendIntent, StoredResponse


class Messages:
    def __init__(self, table: Table) -> None:
        self.table = table

    # --- the intent --------------------------------------------------------------------------
    def commit_intent(self, intent: SendIntent) -> IntentConflict | None:
        """The message item + the recipient's condition and marker (+ the account's reset, +
        the escalation timer) in one request."""
        return self._commit(intent, None, send=True)

    def commit_decided(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        """An intent decided without a provider call: no recipient condition (it was read)."""
        return self._commit(intent, stored, send=False)

    def _commit(self, intent: SendIntent, stored: StoredResponse | None, *, send: bool) -> IntentConflict | None:
        tx = self.table.transaction()
        message = intent.message
        expression = Expression()
        tx.put("message", message_item(intent, stored), expression.absent("pk"), expression)
        if send:
            expect = intent.expectations
            tx.update(
                "recipient",
                recipient_pk(message.recipient_key),
                RECIPIENT_SK,
                recipients.for_send(
                    expect.suppression_version, expect.last_send, message.created_at, message.message_id
                ),
            )
        if intent.reset is not None:
            _add_reset(tx, intent)
        if message.escalation:
            tx.put("escalation", escalation_item(message))
        if len(tx.actions) == 1:
            return self._put_alone(intent, stored)
        try:
            tx.commit()
        except Cancelled as cancelled:
            return _conflict_from(cancelled)
        return None

    def _put_alone(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        expression = Expression()
        try:
            self.table.put(message_item(intent, stored), expression.absent("pk"), expression)
        except ConditionFailed as failed:
            return IntentConflict(existing=record_from(failed.old)) if failed.old else IntentConflict(retryable=True)
        except DependencyUnavailable as unavailable:
            if transaction_conflict(unavailable.__cause__):
                return IntentConflict(retryable=True, in_flight=True)
            raise
        return None

    # --- the outcome -------------------------------------------------------------------------
    def record_outcome(self, outcome: Outcome) -> None:
        message = outcome.message
        update = Update().set(STATE, outcome.new_state.value).set("updated_at", iso(outcome.entry.at))
        if message.attempt != 1:  # attempts only grow: an absent attempt is the first
            update.set("attempt", message.attempt)
        provider_id = outcome.response.provider_message_id if outcome.response else None
        if provider_id:
            update.set("provider_message_id", provider_id)
        if message.reason:
            update.set("reason", message.reason)
        if outcome.stored_response is not None:
            update.set(RESPONSE, answer(outcome.stored_response, provider_id)).remove("lease_until")
        if not keeps_params(outcome.new_state, bool(message.escalation)):
            # Nothing will render this message again (no resend, no fallback): its params go.
            update.remove(PARAMS, PARAMS_DEFLATED)
        due = (outcome.due_kind, outcome.due_at) if outcome.due_kind and outcome.due_at else None
        set_due(update, message.message_id, due)
        history.append(update, outcome.entry, within=provider_id)
        state_in(update, predecessors(outcome.new_state))
        # One UpdateItem for every channel: an accepted SMS's receipt (its provider id to this
        # message) is written by the publisher from this write's stream record (sms_receipts.py).
        try:
            self.table.update(message_pk(message.message_id), MESSAGE_SK, update)
        except ConditionFailed:
            # The message moved on (an event proved more than we know): keep its state, still
            # record what the provider told us so the evidence is complete.
            self.append(message.message_id, [outcome.entry])

    def append(self, message_id: str, entries: list[HistoryEntry]) -> None:
        update = Update()
        for entry in entries:
            history.append(update, entry)
        update.when(update.present("pk"))
        with contextlib.suppress(ConditionFailed):  # no such message: nothing to explain
            self.table.update(message_pk(message_id), MESSAGE_SK, update)

    # --- reads -------------------------------------------------------------------------------
    def get(self, message_id: str) -> Message | None:
        """The message with its history, its receipt folded in (one Query: both share a pk)."""
        found = {str(item["sk"]["S"]): item for item in self.table.query(message_pk(message_id))}
        item = found.get(MESSAGE_SK)
        if item is None:
            return None
        message = message_from(item)
        pairs = history.entries_of(item)
        for receipt in self._receipts(message, found.get(MESSAGE_RECEIPT_SK)):
            receipts.fold(message, receipt)
            pairs += receipts.history_of(message, receipt)
        message.history = history.in_order(pairs)
        return message

    def _receipts(self, message: Message, own: Item | None) -> list[Item]:
        found = [own] if own else []
        if message.channel is Channel.SMS and message.provider_message_id:
            # An accepted SMS's status records land on the receipt under the provider's message id.
            sms = self.table.get(receipt_pk(message.provider_message_id), RECEIPT_SK)
            found += [sms] if sms else []
        return found

    def idempotency_key_of(self, message_id: str) -> str | None:
        item = self.table.get(message_pk(message_id), MESSAGE_SK)
        return str(item["idem_key"]["S"]) if item and "idem_key" in item else None

    def created_in(self, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
        return evidence_index.created_in(self.table, owner, window, after, limit)

    # --- poller transitions ------------------------------------------------------------------
    def transition(
        self,
        message_id: str,
        allowed: frozenset[MessageState],
        target: MessageState,
        entries: list[HistoryEntry],
        due: tuple[DueKind, datetime] | None,
        attempt: int | None = None,
        unsuppressed: str | None = None,
        unless_evidence: bool = False,
        provider_message_id: str | None = None,
    ) -> Transition:
        update = Update().set(STATE, target.value)
        if provider_message_id is not None:
            update.set("provider_message_id", provider_message_id)
        if entries:
            update.set("updated_at", iso(entries[-1].at))
        if attempt is not None:
            update.set("attempt", attempt)
        set_due(update, message_id, due)
        for entry in entries:
            history.append(update, entry)
        update.when(update.present("pk"))
        state_in(update, allowed)
        try:
            if unsuppressed is None and not unless_evidence:
                self.table.update(message_pk(message_id), MESSAGE_SK, update)
                return Transition.APPLIED
            tx = self.table.transaction()
            tx.update("message", message_pk(message_id), MESSAGE_SK, update)
            if unsuppressed is not None:
                recipients.check_not_suppressed(tx, unsuppressed)
            if unless_evidence:
                # Any event on the receipt proves the provider accepted an earlier attempt.
                e = Expression()
                tx.check("receipt", message_pk(message_id), MESSAGE_RECEIPT_SK, e.absent("pk"), e)
            tx.commit()
        except ConditionFailed:
            return Transition.MOVED_ON
        except Cancelled as cancelled:
            if "recipient" in cancelled.failed:
                return Transition.SUPPRESSED
            if "message" in cancelled.failed or "receipt" in cancelled.failed:
                return Transition.MOVED_ON
            raise DependencyUnavailable("state transition conflicted; retry", retry_after_seconds=1) from None
        return Transition.APPLIED


def _add_reset(tx: Transaction, intent: SendIntent) -> None:
    """The account's one reset record, replaced unless a young active one exists."""
    assert intent.reset is not None
    window_start = intent.reset_window_start or intent.reset.created_at
    e = Expression()
    condition = (
        e.absent("pk")
        | e.differs("state", "active")
        | e.below("created_at", iso(window_start))
        | e.equals("reset_id", intent.reset.reset_id)
    )
    replaces = intent.replaces
    if replaces is not None:
        # A request with another address replaces exactly the reset it saw; its mail says why.
        condition |= e.equals("reset_id", replaces.record.reset_id)
        note = history.append(Update(), replaces.entry)
        note.when(note.present("pk"))
        tx.update("replaced", message_pk(replaces.record.message_id), MESSAGE_SK, note)
    tx.put("reset", reset_item(intent.reset), condition, e)


def _conflict_from(cancelled: Cancelled) -> IntentConflict:
    if cancelled.codes.get("message") == TRANSACTION_CONFLICT:
        # Another write is in progress on this very message item: for a keyed intent, the same
        # key's first request (its intent or its outcome), not a fault of the ledger.
        return IntentConflict(retryable=True, in_flight=True)
    if cancelled.retryable or not cancelled.failed:
        return IntentConflict(retryable=True)
    failed = cancelled.failed
    existing = record_from(failed["message"]) if failed.get("message") else None
    recipient = recipients.failed_recipient(cancelled)
    old_reset = failed.get("reset")
    reset = reset_from(old_reset) if old_reset else None
    return IntentConflict(existing=existing, recipient=recipient, reset=reset)
