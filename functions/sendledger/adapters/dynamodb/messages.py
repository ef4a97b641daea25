"""The message item: a send's intent, its key's idempotency record, state and history.

One item carries all three so that a send writes it once (the intent) and updates it once
(the outcome), and a replay is answered by the item its intent collides with.
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sendledger.adapters.dynamodb import history, receipts, recipients
from sendledger.adapters.dynamodb.keys import (
    ESCALATION_SK,
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RECEIPT_SK,
    RECIPIENT_SK,
    due_shard,
    message_pk,
    receipt_pk,
    recipient_pk,
)
from sendledger.adapters.dynamodb.resets import reset_from, reset_item
from sendledger.adapters.dynamodb.states import DUE_AT, DUE_KIND, STATE, set_due, state_in
from sendledger.adapters.dynamodb.table import (
    Cancelled,
    ConditionFailed,
    Expression,
    Item,
    Table,
    Transaction,
    Update,
    decode,
    encode_item,
)
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import DueKind, HistoryEntry, Message, MessageState, Template, Transition, predecessors
from sendledger.domain.recipients import Channel
from sendledger.ports import IdempotencyRecord, IntentConflict, Outcome, SendIntent, StoredResponse

RESPONSE = "response"


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
        tx.put("message", _message_item(intent, stored), f"attribute_not_exists({expression.name('pk')})", expression)
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
            tx.put("escalation", _escalation_item(message))
        if len(tx.actions) == 1:
            return self._put_alone(intent, stored)
        try:
            tx.commit()
        except Cancelled as cancelled:
            return _conflict_from(cancelled, intent.message.created_at)
        return None

    def _put_alone(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        expression = Expression()
        try:
            self.table.put(_message_item(intent, stored), f"attribute_not_exists({expression.name('pk')})", expression)
        except ConditionFailed as failed:
            return IntentConflict(existing=_record_from(failed.old)) if failed.old else IntentConflict(retryable=True)
        return None

    # --- the outcome -------------------------------------------------------------------------
    def record_outcome(self, outcome: Outcome) -> None:
        message = outcome.message
        update = Update().set(STATE, outcome.new_state.value).set("updated_at", iso(outcome.entry.at))
        update.set("attempt", message.attempt)
        if outcome.response and outcome.response.provider_message_id:
            update.set("provider_message_id", outcome.response.provider_message_id)
        if message.reason:
            update.set("reason", message.reason)
        if outcome.stored_response is not None:
            provider_id = outcome.response.provider_message_id if outcome.response else None
            update.set(RESPONSE, _answer(outcome.stored_response, provider_id)).remove("lease_until")
        due = (outcome.due_kind, outcome.due_at) if outcome.due_kind and outcome.due_at else None
        set_due(update, message.message_id, due)
        history.append(update, outcome.entry)
        state_in(update, predecessors(outcome.new_state))
        receipt = receipts.for_outcome(outcome)
        try:
            if receipt is None:
                self.table.update(message_pk(message.message_id), MESSAGE_SK, update)
            else:
                tx = self.table.transaction()
                tx.update("message", message_pk(message.message_id), MESSAGE_SK, update)
                tx.put("receipt", receipt)
                tx.commit()
        except (ConditionFailed, Cancelled) as failed:
            if isinstance(failed, Cancelled) and "message" not in failed.failed:
                raise DependencyUnavailable("outcome write conflicted; retry") from None
            # The message moved on (an event proved more than we know): keep its state, still
            # record what the provider told us so the evidence is complete.
            self.append(message.message_id, [outcome.entry])

    def append(self, message_id: str, entries: list[HistoryEntry]) -> None:
        update = Update()
        for entry in entries:
            history.append(update, entry)
        update.when(f"attribute_exists({update.name('pk')})")
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
            # An accepted SMS's status records land on the receipt under SNS's message id.
            sms = self.table.get(receipt_pk(message.provider_message_id), RECEIPT_SK)
            found += [sms] if sms else []
        return found

    def idempotency_key_of(self, message_id: str) -> str | None:
        item = self.table.get(message_pk(message_id), MESSAGE_SK)
        return str(item["idem_key"]["S"]) if item and "idem_key" in item else None

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
    ) -> Transition:
        update = Update().set(STATE, target.value)
        if entries:
            update.set("updated_at", iso(entries[-1].at))
        if attempt is not None:
            update.set("attempt", attempt)
        set_due(update, message_id, due)
        for entry in entries:
            history.append(update, entry)
        update.when(f"attribute_exists({update.name('pk')})")
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
                tx.check(
                    "receipt", message_pk(message_id), MESSAGE_RECEIPT_SK, f"attribute_not_exists({e.name('pk')})", e
                )
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
        f"attribute_not_exists({e.name('pk')}) OR {e.name('state')} <> {e.value('active')}"
        f" OR {e.name('created_at')} < {e.value(iso(window_start))}"
        f" OR {e.name('reset_id')} = {e.value(intent.reset.reset_id)}"
    )
    tx.put("reset", reset_item(intent.reset), condition, e)


def _conflict_from(cancelled: Cancelled, now: datetime) -> IntentConflict:
    if cancelled.retryable or not cancelled.failed:
        return IntentConflict(retryable=True)
    failed = cancelled.failed
    existing = _record_from(failed["message"]) if failed.get("message") else None
    recipient = recipients.failed_recipient(cancelled)
    old_reset = failed.get("reset")
    reset = reset_from(old_reset) if old_reset else None
    return IntentConflict(existing=existing, recipient=recipient, reset=reset)


def _message_item(intent: SendIntent, stored: StoredResponse | None) -> Item:
    message = intent.message
    due = intent.due
    if due is None and message.state is MessageState.SENDING:
        # In flight until the outcome write; if we crash, the poller finds it here after the lease.
        due = (DueKind.INFLIGHT, intent.lease_until)
    values: dict[str, Any] = {
        "pk": message_pk(message.message_id),
        "sk": MESSAGE_SK,
        **_message_fields(message),
        STATE: message.state.value,
        "updated_at": iso(message.updated_at),
        "reason": message.reason,
        "reset_account_id": message.reset_account_id,
        "params": json.dumps(message.params, separators=(",", ":")) if message.params is not None else None,
        "attempt": message.attempt,
        "parent_key": message.parent_key,
        "owner": message.owner,
    }
    if due is not None:
        values[DUE_KIND] = due_shard(due[0].value, message.message_id)
        values[DUE_AT] = int(due[1].timestamp())
    if intent.idempotency_key is not None:
        assert intent.fingerprint is not None and intent.idempotency_expires_at is not None
        values.update(
            idem_key=intent.idempotency_key,
            idem_fingerprint=intent.fingerprint,
            idem_expires_at=int(intent.idempotency_expires_at.timestamp()),
        )
        if stored is not None:
            values[RESPONSE] = _answer(stored, None)
        else:
            values["lease_until"] = iso(intent.lease_until)
    name, entry = history.encoded(intent.first_entry)
    values[name] = entry
    return encode_item(values)


def _message_fields(message: Message) -> dict[str, Any]:
    """What the message item and its escalation timer both carry."""
    return {
        "message_id": message.message_id,
        "channel": message.channel.value,
        "recipient": message.to,
        "recipient_key": message.recipient_key,
        "template_id": message.template.id,
        "template_version": message.template.version,
        "category": message.category,
        "created_at": iso(message.created_at),
        "escalation": json.dumps(message.escalation, separators=(",", ":")) if message.escalation else None,
    }


def _escalation_item(message: Message) -> Item:
    assert message.escalation is not None
    deadline = message.created_at + timedelta(seconds=int(message.escalation["deadline_seconds"]))
    return encode_item(
        {
            "pk": message_pk(message.message_id),
            "sk": ESCALATION_SK,
            **_message_fields(message),
            STATE: "scheduled",
            "updated_at": iso(message.created_at),
            DUE_KIND: due_shard(DueKind.ESCALATION.value, message.message_id),
            DUE_AT: int(deadline.timestamp()),
        }
    )


def message_from(item: Item) -> Message:
    values = {name: decode(value) for name, value in item.items() if not name.startswith("h:")}
    return Message(
        message_id=values["message_id"],
        channel=Channel(values["channel"]),
        to=values["recipient"],
        template=Template(values["template_id"], values["template_version"]),
        state=MessageState(values[STATE]),
        category=values["category"],
        created_at=parse_iso(values["created_at"]),
        updated_at=parse_iso(values["updated_at"]),
        recipient_key=values["recipient_key"],
        provider_message_id=values.get("provider_message_id"),
        reason=values.get("reason"),
        reset_account_id=values.get("reset_account_id"),
        params=json.loads(values["params"]) if values.get("params") else None,
        escalation=json.loads(values["escalation"]) if values.get("escalation") else None,
        attempt=int(values.get("attempt", 1)),
        parent_key=values.get("parent_key"),
        owner=values.get("owner"),
    )


def _answer(stored: StoredResponse, item_provider_message_id: str | None) -> str:
    """What changes after an answer, as it was (the rest of the answer never changes)."""
    message = stored.message
    answer: dict[str, Any] = {"state": message.state.value, "updated_at": iso(message.updated_at)}
    if message.reason:
        answer["reason"] = message.reason
    if message.provider_message_id:
        # Only an outcome sets the item's provider id, and it rewrites the answer: when the item
        # holds the same id, a flag suffices.
        same = message.provider_message_id == item_provider_message_id
        answer["provider_message_id"] = True if same else message.provider_message_id
    return json.dumps(answer, separators=(",", ":"))


def _answered(item: Item, answer: str) -> StoredResponse:
    values = json.loads(answer)
    message = message_from(item)
    message.state = MessageState(values["state"])
    message.updated_at = parse_iso(values["updated_at"])
    message.reason = values.get("reason")
    answered_id = values.get("provider_message_id")
    message.provider_message_id = (
        answered_id if isinstance(answered_id, str) else (message.provider_message_id if answered_id else None)
    )
    return StoredResponse(message)


def _record_from(item: Item | None) -> IdempotencyRecord | None:
    if not item or "idem_key" not in item:
        return None
    values = {name: decode(value) for name, value in item.items() if not name.startswith("h:")}
    response = values.get(RESPONSE)
    lease = values.get("lease_until")
    return IdempotencyRecord(
        key=values["idem_key"],
        fingerprint=values["idem_fingerprint"],
        message_id=values["message_id"],
        completed=response is not None,
        lease_until=parse_iso(lease) if lease else parse_iso(values["created_at"]),
        expires_at=datetime.fromtimestamp(int(values["idem_expires_at"]), tz=UTC),
        response=_answered(item, response) if response else None,
    )
