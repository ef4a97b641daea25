"""The message item: a send's intent, its key's idempotency record, state and history."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

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
from sendledger.ports.messages import (
    CreatedPage,
    IdempotencyRecord,
    IntentConflict,
    Outcome,
    SendIntent,
    StoredResponse,
)
from tests.unit.fakes import escalations, receipts, recipients, resets
from tests.unit.fakes.history import History, in_order, ms
from tests.unit.fakes.state import LedgerState


@dataclass(frozen=True)
class KeyRecord:
    key: str
    fingerprint: str
    expires_at: datetime  # kept in whole seconds, as the item's TTL attribute


@dataclass
class MessageItem:
    message: Message  # as stored: no history (that is `history`), no receipt folded in
    history: History = field(default_factory=History)
    due: tuple[DueKind, datetime] | None = None
    key: KeyRecord | None = None
    lease_until: datetime | None = None  # a keyed send in flight: until its answer is stored
    response: StoredResponse | None = None  # the stored answer

    @classmethod
    def of(cls, intent: SendIntent, stored: StoredResponse | None) -> MessageItem:
        message = _stored_message(intent.message)
        due = intent.due
        if due is None and message.state is MessageState.SENDING:
            due = (DueKind.INFLIGHT, intent.lease_until)  # found by the poller if the sender crashes
        item = cls(message, due=due)
        if intent.idempotency_key is not None:
            assert intent.fingerprint is not None and intent.idempotency_expires_at is not None
            expires = datetime.fromtimestamp(int(intent.idempotency_expires_at.timestamp()), tz=UTC)
            item.key = KeyRecord(intent.idempotency_key, intent.fingerprint, expires)
            if stored is not None:
                item.response = _answer(stored)
            else:
                item.lease_until = ms(intent.lease_until)
        item.history.append(intent.first_entry)
        return item

    def record(self) -> IdempotencyRecord | None:
        """The item seen as its key's record (None: an unkeyed message)."""
        if self.key is None:
            return None
        return IdempotencyRecord(
            key=self.key.key,
            fingerprint=self.key.fingerprint,
            message_id=self.message.message_id,
            completed=self.response is not None,
            lease_until=self.lease_until or self.message.created_at,
            expires_at=self.key.expires_at,
            response=copy.deepcopy(self.response),
        )

    def move(
        self,
        target: MessageState,
        entries: list[HistoryEntry],
        due: tuple[DueKind, datetime] | None,
        attempt: int | None = None,
    ) -> None:
        self.message.state = target
        if entries:
            self.message.updated_at = ms(entries[-1].at)
        if attempt is not None:
            self.message.attempt = attempt
        self.due = due
        for entry in entries:
            self.history.append(entry)


class FakeMessages:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    # --- the intent ------------------------------------------------------------------------------
    def commit_intent(self, intent: SendIntent) -> IntentConflict | None:
        return self._commit(intent, None, send=True)

    def commit_decided(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        return self._commit(intent, stored, send=False)

    def _commit(self, intent: SendIntent, stored: StoredResponse | None, *, send: bool) -> IntentConflict | None:
        message = intent.message
        with self.db.lock:
            taken = self.db.messages.get(message.message_id)
            refused = recipients.refuses_send(self.db, message.recipient_key, intent.expectations) if send else None
            young = resets.young_active_reset(self.db, intent)
            replaced = self.db.messages.get(intent.replaces.record.message_id) if intent.replaces else None
            if intent.replaces is not None and replaced is None:
                return IntentConflict(retryable=True)
            if taken is not None or refused is not None or young is not None:
                conflict = IntentConflict(existing=taken.record() if taken else None, recipient=refused, reset=young)
                # An unkeyed id taken (never, in practice): nothing to answer with, nothing written.
                return conflict if conflict != IntentConflict() else IntentConflict(retryable=True)
            self.db.messages[message.message_id] = MessageItem.of(intent, stored)
            if send:
                recipients.mark_sent(
                    self.db, message.recipient_key, message.created_at, message.message_id, intent.expectations
                )
            if intent.reset is not None:
                resets.put(self.db, intent.reset)
            if intent.replaces is not None and replaced is not None:
                replaced.history.append(intent.replaces.entry)
            if message.escalation:
                escalations.schedule(self.db, message)
        return None

    # --- the outcome -----------------------------------------------------------------------------
    def record_outcome(self, outcome: Outcome) -> None:
        message = outcome.message
        with self.db.lock:
            item = self.db.messages.get(message.message_id)
            if item is None:
                return  # no such message: nothing to explain
            if item.message.state not in predecessors(outcome.new_state):
                # The message moved on (an event proved more): keep its state, record the evidence.
                item.history.append(outcome.entry)
                return
            due = (outcome.due_kind, outcome.due_at) if outcome.due_kind and outcome.due_at else None
            item.move(outcome.new_state, [outcome.entry], due, attempt=message.attempt)
            if outcome.response and outcome.response.provider_message_id:
                item.message.provider_message_id = outcome.response.provider_message_id
            if message.reason:
                item.message.reason = message.reason
            if outcome.stored_response is not None:
                item.response, item.lease_until = _answer(outcome.stored_response), None
            if not keeps_params(outcome.new_state, bool(message.escalation)):
                item.message.params = None  # as the store does: never rendered again
                if item.response is not None:
                    item.response.message.params = None

    # --- reads -----------------------------------------------------------------------------------
    def get(self, message_id: str) -> Message | None:
        with self.db.lock:
            item = self.db.messages.get(message_id)
            if item is None:
                return None
            message = copy.deepcopy(item.message)
            histories = [item.history]
            for receipt in receipts.receipts_of(self.db, message):
                receipts.fold(message, receipt)
                histories.append(receipts.as_read(message, receipt))
            message.history = in_order(*histories)
            return message

    def idempotency_key_of(self, message_id: str) -> str | None:
        item = self.db.messages.get(message_id)
        return item.key.key if item is not None and item.key is not None else None

    def created_in(self, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
        """The evidence index: the owner's message items by creation time (ties by id)."""
        with self.db.lock:
            found = sorted(
                (ms(item.message.created_at), message_id)
                for message_id, item in self.db.messages.items()
                if item.message.owner == owner and window.contains(ms(item.message.created_at))
            )
        if after is not None:
            found = [entry for entry in found if entry > (after.created_at, after.message_id)]
        return CreatedPage([Position(at, message_id) for at, message_id in found[:limit]], len(found) > limit)

    # --- poller transitions ----------------------------------------------------------------------
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
        with self.db.lock:
            item = self.db.messages.get(message_id)
            if unsuppressed is not None and recipients.is_suppressed(self.db, unsuppressed):
                return Transition.SUPPRESSED  # reported first, whatever else failed
            if item is None or item.message.state not in allowed:
                return Transition.MOVED_ON
            if unless_evidence and receipts.of_message(message_id) in self.db.receipts:
                return Transition.MOVED_ON  # an event proves an earlier attempt was accepted
            item.move(target, entries, due, attempt)
            if provider_message_id is not None:
                item.message.provider_message_id = provider_message_id
            return Transition.APPLIED


def _as_stored(message: Message) -> Message:
    stored = copy.deepcopy(replace(message, history=[]))
    stored.created_at, stored.updated_at = ms(message.created_at), ms(message.updated_at)
    return stored


def _stored_message(message: Message) -> Message:
    stored = _as_stored(message)
    stored.provider_message_id = None  # not part of the intent's item: the outcome writes it
    return stored


def _answer(stored: StoredResponse) -> StoredResponse:
    return StoredResponse(_as_stored(stored.message))
