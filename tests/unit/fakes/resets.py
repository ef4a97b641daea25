"""The caller's one password-reset record per account: replaced in the send's write unless a
young active one stands; consume is one conditional write; a re-arm swaps the hash and starts
the send. Keyed as the table's item is, by the real key function (owner + account id), and the
owner read back from that key as the DynamoDB store reads it."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sendledger.adapters.dynamodb.keys import reset_key_parts, reset_pk
from sendledger.domain.callers import CallerId
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import END_STEP, DueKind, HistoryEntry, HistoryType, Message, MessageState, predecessors
from sendledger.ports.messages import SendIntent
from sendledger.ports.resets import ResetRecord
from tests.unit.fakes import receipts, recipients
from tests.unit.fakes.history import ms
from tests.unit.fakes.state import LedgerState

ACTIVE = "active"


def young_active_reset(db: LedgerState, intent: SendIntent) -> ResetRecord | None:
    """The account's reset when it keeps the intent's from being written (else None)."""
    if intent.reset is None:
        return None
    current = _as_keyed(db, key_of(intent.reset))
    window_start = ms(intent.reset_window_start or intent.reset.created_at)
    if current is None or current.state != ACTIVE or current.created_at < window_start:
        return None
    if intent.replaces is not None and current.reset_id == intent.replaces.record.reset_id:
        return None  # the one this request replaces
    return None if current.reset_id == intent.reset.reset_id else current


def key_of(record: ResetRecord) -> str:
    return reset_pk(record.owner, record.account_id)


def read(db: LedgerState, owner: str, account_id: str) -> ResetRecord | None:
    """The item at the key, its owner and account id as the key says (as reset_from reads them)."""
    return _as_keyed(db, reset_pk(owner, account_id))


def _as_keyed(db: LedgerState, pk: str) -> ResetRecord | None:
    stored = db.resets.get(pk)
    if stored is None:
        return None
    owner, account_id = reset_key_parts(pk)
    return replace(stored, owner=CallerId(owner), account_id=account_id)


def put(db: LedgerState, record: ResetRecord) -> None:
    db.resets[key_of(record)] = replace(record, created_at=ms(record.created_at), expires_at=ms(record.expires_at))


class FakeResets:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def get(self, owner: str, account_id: str) -> ResetRecord | None:
        return read(self.db, owner, account_id)

    def consume(self, owner: str, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        with self.db.lock:
            current = read(self.db, owner, account_id)
            if current is None or current.state != ACTIVE or current.token_hash != token_hash:
                return None
            if current.expires_at <= ms(now):
                return None
            put(self.db, replace(current, state="consumed"))
            self._record_end(current, HistoryEntry(at=now, type=HistoryType.RESET_CONSUMED, step=END_STEP))
            return read(self.db, owner, account_id)

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None:
        with self.db.lock:
            current = self._live(record)
            if current is None:
                return  # replaced or consumed meanwhile: nothing left to lock
            counted = replace(current, failed_attempts=current.failed_attempts + 1)
            if counted.failed_attempts >= max_attempts:
                counted = replace(counted, state="invalidated")
                entry = HistoryEntry(
                    at=now, type=HistoryType.RESET_LOCKED, evidence={"failed_attempts": max_attempts}, step=END_STEP
                )
                self._record_end(current, entry)
            put(self.db, counted)

    def rearm(
        self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry, lease_until: datetime
    ) -> bool:
        with self.db.lock:
            current = self._live(record)
            item = self.db.messages.get(message.message_id)
            failed = set()
            if current is None or current.token_hash != record.token_hash:
                failed.add("reset")
            if item is None or item.message.state not in predecessors(MessageState.SENDING):
                failed.add("message")
            if recipients.is_suppressed(self.db, message.recipient_key):
                failed.add("recipient")
            if receipts.of_message(message.message_id) in self.db.receipts:
                failed.add("receipt")  # an event for an earlier mail proves it was accepted
            if failed == {"recipient"}:
                return False
            if failed:
                raise DependencyUnavailable("reset changed concurrently; retry", retry_after_seconds=1)
            assert current is not None and item is not None
            put(self.db, replace(current, token_hash=new_token_hash))
            item.move(MessageState.SENDING, [entry], (DueKind.INFLIGHT, lease_until), attempt=message.attempt)
            return True

    def _record_end(self, record: ResetRecord, entry: HistoryEntry) -> None:
        item = self.db.messages.get(record.message_id)
        if item is not None:
            item.history.append(entry)

    def _live(self, record: ResetRecord) -> ResetRecord | None:
        current = _as_keyed(self.db, key_of(record))
        if current is None or current.reset_id != record.reset_id or current.state != ACTIVE:
            return None
        return current
