"""DynamoDB implementation of the Ledger port: conditional writes and transactions only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.connection import Connection
from pynamodb.exceptions import PynamoDBException
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from sendledger.adapters.dynamodb.models import (
    HistoryItem,
    IdempotencyItem,
    LastSendItem,
    LedgerModel,
    MessageItem,
    ReceiptItem,
    ResetItem,
    SuppressionItem,
    WatermarkItem,
    bind,
)
from sendledger.adapters.dynamodb.transaction import Cancelled, LabelledTransaction
from sendledger.domain import ids
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import apply_receipt
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    Template,
    predecessors,
)
from sendledger.domain.recipients import Channel
from sendledger.ports import (
    MISSING,
    IdempotencyRecord,
    IntentConflict,
    Outcome,
    ResetRecord,
    SendIntent,
    StoredResponse,
    SuppressionView,
)

STATE_SK = "STATE"
LAST_SK = "LAST"


def idem_pk(key: str) -> str:
    return f"IDEM#{key}"


def msg_pk(message_id: str) -> str:
    return f"MSG#{message_id}"


def sup_pk(recipient_key: str) -> str:
    return f"SUP#{recipient_key}"


def wm_pk(source: str) -> str:
    return f"WM#{source}"


def reset_pk(account_id: str) -> str:
    return f"RESET#{account_id}"


def history_sk(at: datetime, step: int = 0) -> str:
    # Time-ordered and never reused: the ULID suffix carries 80 random bits.
    return f"H#{iso(at)}#{step:02d}#{ids.ulid(at)}"


@contextmanager
def dependency_guard() -> Iterator[None]:
    """Any DynamoDB fault surfaces as one domain error (HTTP 503), never as a bare 500."""
    try:
        yield
    except (PynamoDBException, ClientError, BotoCoreError) as exc:
        raise DependencyUnavailable(f"ledger unavailable: {type(exc).__name__}") from exc


class DynamoLedger:
    def __init__(self, table_name: str, connection: Connection | None = None) -> None:
        bind(table_name)
        self.table_name = table_name
        self._connection = connection or Connection(region=LedgerModel.Meta.region)

    # --- send path -----------------------------------------------------------------------
    def commit_intent(self, intent: SendIntent) -> None:
        tx = self._transaction()
        message = intent.message
        self._add_idempotency(tx, intent)
        tx.put("message", _message_item(message, intent), MessageItem.pk.does_not_exist())
        tx.put("history", history_item(message.message_id, intent.first_entry), HistoryItem.pk.does_not_exist())
        self._add_eligibility_checks(tx, intent)
        self._add_reset(tx, intent)
        if message.escalation:
            tx.put(DueKind.ESCALATION, _escalation_item(message), MessageItem.pk.does_not_exist())
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            raise _conflict_from(cancelled) from None

    def commit_without_send(self, intent: SendIntent, stored: StoredResponse | None) -> None:
        tx = self._transaction()
        self._add_idempotency(tx, intent, stored)
        tx.put("message", _message_item(intent.message, intent), MessageItem.pk.does_not_exist())
        tx.put("history", history_item(intent.message.message_id, intent.first_entry), HistoryItem.pk.does_not_exist())
        if intent.message.escalation:
            tx.put(DueKind.ESCALATION, _escalation_item(intent.message), MessageItem.pk.does_not_exist())
        self._add_reset(tx, intent)
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            raise _conflict_from(cancelled) from None

    def record_outcome(self, outcome: Outcome) -> None:
        message = outcome.message
        item = MessageItem(msg_pk(message.message_id), "MSG")
        actions: list[Action] = [
            MessageItem.state.set(outcome.new_state.value),
            MessageItem.updated_at.set(iso(outcome.entry.at)),
            MessageItem.attempt.set(message.attempt),
        ]
        if outcome.response and outcome.response.provider_message_id:
            actions.append(MessageItem.provider_message_id.set(outcome.response.provider_message_id))
        if message.reason:
            actions.append(MessageItem.reason.set(message.reason))
        if outcome.due_kind and outcome.due_at:
            actions += [
                MessageItem.due_kind.set(outcome.due_kind),
                MessageItem.due_at.set(int(outcome.due_at.timestamp())),
            ]
        else:
            actions += [MessageItem.due_kind.remove(), MessageItem.due_at.remove()]
        allowed = [state.value for state in predecessors(outcome.new_state)]
        tx = self._transaction()
        tx.update("message", item, actions, MessageItem.state.is_in(*allowed))
        tx.put("history", history_item(message.message_id, outcome.entry), HistoryItem.pk.does_not_exist())
        add_receipt(tx, outcome)
        if outcome.idempotency_key and outcome.stored_response:
            idem = IdempotencyItem(idem_pk(outcome.idempotency_key), "IDEM")
            tx.update(
                "idempotency",
                idem,
                [
                    IdempotencyItem.status.set("completed"),
                    IdempotencyItem.response_body.set(json.dumps(outcome.stored_response.view)),
                ],
            )
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            if "message" not in cancelled.failed:
                raise DependencyUnavailable("outcome write conflicted; retry") from None
            # The message moved on (an event proved more than we know): keep its state, still
            # record what the provider told us so the evidence is complete.
            self._append_history(message.message_id, outcome.entry)

    def _append_history(self, message_id: str, entry: HistoryEntry) -> None:
        with dependency_guard():
            history_item(message_id, entry).save(HistoryItem.pk.does_not_exist())

    def get_message(self, message_id: str, with_history: bool = True) -> Message | None:
        with dependency_guard():
            if not with_history:
                try:
                    row = _message_from(MessageItem.get(msg_pk(message_id), "MSG", consistent_read=True))
                except MessageItem.DoesNotExist:
                    return None
                self._merge_receipt(row, [])
                return row
            items = _query_partition(msg_pk(message_id))
        message: Message | None = None
        history: list[tuple[str, HistoryEntry]] = []
        for raw in items:
            sk = raw["sk"]["S"]
            if sk == "MSG":
                message = _message_from(MessageItem.from_raw_data(raw))
            elif sk.startswith("H#"):
                history.append((sk, _history_from(HistoryItem.from_raw_data(raw))))
        if message is not None:
            self._merge_receipt(message, history)
            message.history = [entry for _, entry in sorted(history, key=lambda pair: pair[0])]
        return message

    def _merge_receipt(self, message: Message, history: list[tuple[str, HistoryEntry]]) -> None:
        """An accepted SMS's outcome and its events' history live on its receipt: read them too."""
        if message.channel is not Channel.SMS or not message.provider_message_id:
            return
        with dependency_guard():
            items = _query_partition(receipt_pk(message.provider_message_id))
        for raw in items:
            sk = raw["sk"]["S"]
            if sk == RECEIPT_SK:
                receipt = ReceiptItem.from_raw_data(raw)
                if receipt.message_id == message.message_id and receipt.state:
                    apply_receipt(message, MessageState(receipt.state), receipt.reason)
            elif sk.startswith("H#"):
                history.append((sk, _history_from(HistoryItem.from_raw_data(raw))))

    def get_watermark(self, source: str) -> datetime | None:
        with dependency_guard():
            try:
                item = WatermarkItem.get(wm_pk(source), "WM", consistent_read=True)
            except WatermarkItem.DoesNotExist:
                return None
        return parse_iso(item.watermark) if item.watermark else None

    def get_last_send(self, recipient_key: str) -> datetime | None:
        with dependency_guard():
            try:
                item = LastSendItem.get(sup_pk(recipient_key), LAST_SK, consistent_read=True)
            except LastSendItem.DoesNotExist:
                return None
        return parse_iso(item.last_send_at)

    # --- suppression ------------------------------------------------------------------------
    def get_suppression(self, recipient_key: str) -> SuppressionView:
        with dependency_guard():
            items = _query_partition(sup_pk(recipient_key))
        state = SuppressionState(suppressed=False, version=0)
        history: list[dict[str, Any]] = []
        for raw in items:
            sk = raw["sk"]["S"]
            if sk == STATE_SK:
                state = _suppression_from(SuppressionItem.from_raw_data(raw))
            elif sk.startswith("H#"):
                entry = HistoryItem.from_raw_data(raw)
                history.append({"at": entry.at, "type": entry.type, **json.loads(entry.evidence)})
        return SuppressionView(state=state, history=history)

    def change_suppression(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState:
        """Optimistic locking: the write only lands on the version the caller read."""
        new_version = expected_version + 1
        item = SuppressionItem(
            sup_pk(recipient_key),
            STATE_SK,
            suppressed=suppressed,
            version=new_version,
            reason=reason,
            since=iso(now),
            source_event=f"admin:{actor}",
            updated_at=iso(now),
        )
        condition = (
            SuppressionItem.pk.does_not_exist()
            if expected_version == 0
            else SuppressionItem.version == expected_version
        )
        entry = HistoryEntry(
            at=now,
            type=HistoryType.SUPPRESSED if suppressed else HistoryType.UNSUPPRESSED,
            evidence={"actor": actor, "reason": reason, "version": new_version, "source": "admin"},
            step=new_version % 100,
        )
        tx = self._transaction()
        tx.put("suppression", item, condition)
        tx.put("history", history_item_for(sup_pk(recipient_key), entry), HistoryItem.pk.does_not_exist())
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            if "suppression" in cancelled.failed:
                raise DependencyUnavailable("suppression changed concurrently; retry", retry_after_seconds=1) from None
            raise DependencyUnavailable("suppression write conflicted; retry") from None
        return SuppressionState(suppressed=suppressed, version=new_version, reason=reason, since=now)

    def record_unchanged_suppression(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        """An admin act that changes nothing is still audited: history only, version and since kept.

        The entry is conditioned on the version the caller read, so "unchanged" is true when written.
        """
        entry = HistoryEntry(
            at=now,
            type=HistoryType.SUPPRESSED if suppressed else HistoryType.UNSUPPRESSED,
            evidence={"actor": actor, "reason": reason, "version": version, "source": "admin", "unchanged": True},
        )
        condition = SuppressionItem.pk.does_not_exist() if version == 0 else SuppressionItem.version == version
        tx = self._transaction()
        tx.check("suppression", SuppressionItem, sup_pk(recipient_key), STATE_SK, condition)
        tx.put("history", history_item_for(sup_pk(recipient_key), entry), HistoryItem.pk.does_not_exist())
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled:
            raise DependencyUnavailable("suppression changed concurrently; retry", retry_after_seconds=1) from None

    # --- password resets --------------------------------------------------------------------
    def get_reset(self, account_id: str) -> ResetRecord | None:
        with dependency_guard():
            try:
                return _reset_from(ResetItem.get(reset_pk(account_id), "ACTIVE", consistent_read=True))
            except ResetItem.DoesNotExist:
                return None

    def consume_reset(self, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        item = ResetItem(reset_pk(account_id), "ACTIVE")
        try:
            with dependency_guard():
                item.update(
                    actions=[ResetItem.state.set("consumed")],
                    condition=(ResetItem.state == "active")
                    & (ResetItem.token_hash == token_hash)
                    & (ResetItem.valid_until > iso(now)),
                )
        except DependencyUnavailable as exc:
            if is_condition_failure(exc):
                return None
            raise
        return _reset_from(item)

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None:
        item = ResetItem(reset_pk(record.account_id), "ACTIVE")
        live = (ResetItem.reset_id == record.reset_id) & (ResetItem.state == "active")
        try:
            with dependency_guard():
                item.update(actions=[ResetItem.failed_attempts.add(1)], condition=live)
                if int(item.failed_attempts or 0) >= max_attempts:
                    item.update(actions=[ResetItem.state.set("invalidated")], condition=live)
        except DependencyUnavailable as exc:
            if not is_condition_failure(exc):
                raise

    def rearm_reset(
        self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry, lease_until: datetime
    ) -> bool:
        """Swap the token hash and start the send, unless the address got suppressed meanwhile."""
        tx = self._transaction()
        tx.update(
            "reset",
            ResetItem(reset_pk(record.account_id), "ACTIVE"),
            # Wrong tokens keep counting across mints: the lockout is per reset, not per link.
            [ResetItem.token_hash.set(new_token_hash)],
            (ResetItem.reset_id == record.reset_id)
            & (ResetItem.token_hash == record.token_hash)
            & (ResetItem.state == "active"),
        )
        tx.update(
            "message",
            MessageItem(msg_pk(message.message_id), "MSG"),
            [
                MessageItem.state.set(MessageState.SENDING.value),
                MessageItem.attempt.set(message.attempt),
                MessageItem.due_kind.set(DueKind.INFLIGHT.value),
                MessageItem.due_at.set(int(lease_until.timestamp())),
                MessageItem.updated_at.set(iso(entry.at)),
            ],
            MessageItem.state.is_in(*[s.value for s in predecessors(MessageState.SENDING)]),
        )
        tx.put("history", history_item(message.message_id, entry), HistoryItem.pk.does_not_exist())
        check_not_suppressed(tx, message.recipient_key)
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            if set(cancelled.failed) == {"suppression"}:
                return False
            raise DependencyUnavailable("reset changed concurrently; retry", retry_after_seconds=1) from None
        return True

    # --- helpers ----------------------------------------------------------------------------
    def _transaction(self) -> LabelledTransaction:
        return LabelledTransaction(self._connection)

    def _add_idempotency(
        self, tx: LabelledTransaction, intent: SendIntent, stored: StoredResponse | None = None
    ) -> None:
        if intent.idempotency_key is None:
            return
        assert intent.fingerprint is not None and intent.idempotency_expires_at is not None
        now = intent.first_entry.at
        item = IdempotencyItem(
            idem_pk(intent.idempotency_key),
            "IDEM",
            fingerprint=intent.fingerprint,
            message_id=intent.message.message_id,
            status="completed" if stored else "in_progress",
            lease_until=iso(intent.lease_until),
            created_at=iso(now),
            expires_at=intent.idempotency_expires_at,
            response_body=json.dumps(stored.view) if stored else None,
        )
        # An expired key (TTL deletion is lazy) counts as absent.
        tx.put(
            "idempotency",
            item,
            IdempotencyItem.pk.does_not_exist() | (IdempotencyItem.expires_at < now),
        )

    def _add_reset(self, tx: LabelledTransaction, intent: SendIntent) -> None:
        """The account's one reset record, replaced unless a young active one exists."""
        if intent.reset is None:
            return
        window_start = intent.reset_window_start or intent.reset.created_at
        tx.put(
            "reset",
            _reset_item(intent.reset),
            ResetItem.pk.does_not_exist()
            | (ResetItem.state != "active")
            | (ResetItem.created_at < iso(window_start))
            | (ResetItem.reset_id == intent.reset.reset_id),
        )

    def _add_eligibility_checks(self, tx: LabelledTransaction, intent: SendIntent) -> None:
        expect = intent.expectations
        key = intent.message.recipient_key
        sup_condition = (
            SuppressionItem.pk.does_not_exist()
            if expect.suppression_version == 0
            else (SuppressionItem.version == expect.suppression_version) & (SuppressionItem.suppressed == False)  # noqa: E712
        )
        tx.check("suppression", SuppressionItem, sup_pk(key), STATE_SK, sup_condition)
        last_condition: Condition
        if expect.last_send_exact is not MISSING:
            last_condition = LastSendItem.last_send_at == iso(expect.last_send_exact)
        elif expect.last_send_max is not None:
            last_condition = LastSendItem.pk.does_not_exist() | (LastSendItem.last_send_at <= iso(expect.last_send_max))
        else:
            last_condition = LastSendItem.pk.does_not_exist()
        last = LastSendItem(
            sup_pk(key),
            LAST_SK,
            last_send_at=iso(intent.message.created_at),
            last_message_id=intent.message.message_id,
        )
        tx.put("last_send", last, last_condition)
        if expect.watermark_min is not None:
            tx.check(
                "watermark",
                WatermarkItem,
                wm_pk(expect.watermark_source),
                "WM",
                WatermarkItem.watermark >= iso(expect.watermark_min),
            )


def is_condition_failure(exc: DependencyUnavailable) -> bool:
    """dependency_guard's error for a single-item write whose condition failed (not an outage)."""
    return getattr(exc.__cause__, "cause_response_code", None) == "ConditionalCheckFailedException"


def _query_partition(pk: str) -> list[dict[str, Any]]:
    """Every item of one partition (a message and its history), raw, strongly consistent."""
    connection = LedgerModel._get_connection()
    items: list[dict[str, Any]] = []
    start_key: dict[str, Any] | None = None
    while True:
        page = connection.query(pk, consistent_read=True, exclusive_start_key=start_key)
        items.extend(page.get("Items", []))
        start_key = page.get("LastEvaluatedKey")
        if not start_key:
            return items


def _conflict_from(cancelled: Cancelled) -> IntentConflict:
    if cancelled.retryable or not cancelled.failed:
        return IntentConflict(retryable=True)
    conflict = IntentConflict()
    failed = cancelled.failed
    if "idempotency" in failed:
        raw = failed["idempotency"]
        conflict.idempotency = _idempotency_from(IdempotencyItem.from_raw_data(raw)) if raw else None
    if "suppression" in failed:
        raw = failed["suppression"]
        conflict.suppression = _suppression_from(SuppressionItem.from_raw_data(raw)) if raw else None
    if "last_send" in failed:
        raw = failed["last_send"]
        conflict.last_send = parse_iso(LastSendItem.from_raw_data(raw).last_send_at) if raw else MISSING
    if "watermark" in failed:
        raw = failed["watermark"]
        item = WatermarkItem.from_raw_data(raw) if raw else None
        conflict.watermark = parse_iso(item.watermark) if item and item.watermark else MISSING
    if "reset" in failed:
        raw = failed["reset"]
        conflict.reset = _reset_from(ResetItem.from_raw_data(raw)) if raw else None
    return conflict


def _message_fields(message: Message) -> dict[str, Any]:
    """What the message row and its escalation timer both carry."""
    return {
        "message_id": message.message_id,
        "channel": message.channel.value,
        "to": message.to,
        "recipient_key": message.recipient_key,
        "template_id": message.template.id,
        "template_version": message.template.version,
        "category": message.category,
        "created_at": iso(message.created_at),
        "escalation": json.dumps(message.escalation) if message.escalation else None,
    }


def _message_item(message: Message, intent: SendIntent) -> MessageItem:
    due = _due_of(message, intent)
    return MessageItem(
        msg_pk(message.message_id),
        "MSG",
        **_message_fields(message),
        state=message.state.value,
        updated_at=iso(message.updated_at),
        reason=message.reason,
        reset_account_id=message.reset_account_id,
        params=json.dumps(message.params) if message.params is not None else None,
        attempt=message.attempt,
        idempotency_pk=idem_pk(intent.idempotency_key) if intent.idempotency_key else None,
        parent_key=message.parent_key,
        owner=message.owner,
        due_kind=due[0] if due else None,
        due_at=int(due[1].timestamp()) if due else None,
    )


def _due_of(message: Message, intent: SendIntent) -> tuple[DueKind, datetime] | None:
    if intent.due is not None:
        return intent.due
    # In flight until the outcome write; if we crash, the poller finds it here after the lease.
    return (DueKind.INFLIGHT, intent.lease_until) if message.state is MessageState.SENDING else None


def _escalation_item(message: Message) -> MessageItem:
    assert message.escalation is not None
    deadline = message.created_at + timedelta(seconds=int(message.escalation["deadline_seconds"]))
    return MessageItem(
        msg_pk(message.message_id),
        "ESC",
        **_message_fields(message),
        state="scheduled",
        updated_at=iso(message.created_at),
        due_kind=DueKind.ESCALATION.value,
        due_at=int(deadline.timestamp()),
    )


def check_not_suppressed(tx: LabelledTransaction, recipient_key: str) -> None:
    """Condition a transaction on the recipient not being suppressed (label "suppression")."""
    tx.check(
        "suppression",
        SuppressionItem,
        sup_pk(recipient_key),
        STATE_SK,
        SuppressionItem.pk.does_not_exist() | (SuppressionItem.suppressed == False),  # noqa: E712
    )


def history_item(message_id: str, entry: HistoryEntry) -> HistoryItem:
    return history_item_for(msg_pk(message_id), entry)


def history_item_for(pk: str, entry: HistoryEntry) -> HistoryItem:
    return HistoryItem(
        pk,
        history_sk(entry.at, entry.step),
        at=iso(entry.at),
        type=entry.type,
        state=entry.state.value if entry.state else None,
        evidence=json.dumps(entry.evidence, sort_keys=True, default=str),
    )


def _reset_item(record: ResetRecord) -> ResetItem:
    return ResetItem(
        reset_pk(record.account_id),
        "ACTIVE",
        reset_id=record.reset_id,
        state=record.state,
        token_hash=record.token_hash,
        created_at=iso(record.created_at),
        valid_until=iso(record.expires_at),
        failed_attempts=record.failed_attempts,
        message_id=record.message_id,
        expires_at=record.expires_at + timedelta(days=30),
    )


def _message_from(item: MessageItem) -> Message:
    return Message(
        message_id=item.message_id,
        channel=Channel(item.channel),
        to=item.to,
        template=Template(item.template_id, item.template_version),
        state=MessageState(item.state),
        category=item.category,
        created_at=parse_iso(item.created_at),
        updated_at=parse_iso(item.updated_at),
        recipient_key=item.recipient_key,
        provider_message_id=item.provider_message_id,
        reason=item.reason,
        reset_account_id=item.reset_account_id,
        params=json.loads(item.params) if item.params else None,
        escalation=json.loads(item.escalation) if item.escalation else None,
        attempt=int(item.attempt or 1),
        parent_key=item.parent_key,
        owner=item.owner,
    )


def _history_from(item: HistoryItem) -> HistoryEntry:
    return HistoryEntry(
        at=parse_iso(item.at),
        type=HistoryType(item.type),
        state=MessageState(item.state) if item.state else None,
        evidence=json.loads(item.evidence),
    )


def _suppression_from(item: SuppressionItem) -> SuppressionState:
    return SuppressionState(
        suppressed=bool(item.suppressed),
        version=int(item.version),
        reason=item.reason,
        since=parse_iso(item.since) if item.since else None,
    )


def _idempotency_from(item: IdempotencyItem) -> IdempotencyRecord:
    return IdempotencyRecord(
        key=item.pk.removeprefix("IDEM#"),
        fingerprint=item.fingerprint,
        message_id=item.message_id,
        completed=item.status == "completed",
        lease_until=parse_iso(item.lease_until),
        expires_at=item.expires_at,
        response=StoredResponse(json.loads(item.response_body)) if item.response_body else None,
    )


def _reset_from(item: ResetItem) -> ResetRecord:
    return ResetRecord(
        account_id=item.pk.removeprefix("RESET#"),
        reset_id=item.reset_id,
        state=item.state,
        token_hash=item.token_hash,
        created_at=parse_iso(item.created_at),
        expires_at=parse_iso(item.valid_until),
        failed_attempts=int(item.failed_attempts or 0),
        message_id=item.message_id,
    )


# --- SMS receipts: SNS's message id → the message, and the outcome SNS reports -----------------

RECEIPT_SK = "PMID"


def receipt_pk(provider_message_id: str) -> str:
    return f"PMID#{provider_message_id}"


def add_receipt(tx: LabelledTransaction, outcome: Outcome) -> None:
    """The extra Put for record_outcome's transaction (accepted SMS only; still one request)."""
    response, message = outcome.response, outcome.message
    if message.channel is Channel.SMS and response is not None and response.provider_message_id:
        item = ReceiptItem(
            receipt_pk(response.provider_message_id),
            RECEIPT_SK,
            message_id=message.message_id,
            state=MessageState.ACCEPTED.value,
            updated_at=iso(outcome.entry.at),
            escalates=True if message.escalation else None,
        )
        tx.put("receipt", item)
