"""The caller's one password-reset item per account: a new request replaces it in the send's
transaction, so two tokens are never valid at once; consume is one conditional update. Every
key names the caller: no request, consume or wrong guess of one caller reaches another's."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from sendledger.adapters.dynamodb import history, recipients
from sendledger.adapters.dynamodb.expressions import Expression, Item, Update, decode_item, encode_item
from sendledger.adapters.dynamodb.keys import (
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RESET_SK,
    message_pk,
    reset_key_parts,
    reset_pk,
)
from sendledger.adapters.dynamodb.states import set_due, state_in
from sendledger.adapters.dynamodb.table import Cancelled, ConditionFailed, Table
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import END_STEP, DueKind, HistoryEntry, HistoryType, Message, MessageState, predecessors
from sendledger.ports.resets import ResetRecord

RETENTION = timedelta(days=30)  # the item outlives its token for the evidence, then TTL removes it


def reset_item(record: ResetRecord) -> Item:
    return encode_item(
        {
            "pk": _pk(record),
            "sk": RESET_SK,
            "reset_id": record.reset_id,
            "state": record.state,
            "token_hash": record.token_hash,
            "created_at": iso(record.created_at),
            "valid_until": iso(record.expires_at),
            "failed_attempts": record.failed_attempts,
            "message_id": record.message_id,
            "recipient_fp": record.recipient_fingerprint,
            "expires_at": int((record.expires_at + RETENTION).timestamp()),
        }
    )


def reset_from(item: Item) -> ResetRecord:
    values = decode_item(item)
    owner, account_id = reset_key_parts(str(values["pk"]))
    return ResetRecord(
        owner=CallerId(owner),
        account_id=account_id,
        reset_id=values["reset_id"],
        state=values["state"],
        token_hash=values["token_hash"],
        created_at=parse_iso(values["created_at"]),
        expires_at=parse_iso(values["valid_until"]),
        failed_attempts=int(values.get("failed_attempts", 0)),
        message_id=values["message_id"],
        recipient_fingerprint=values.get("recipient_fp"),
    )


def _pk(record: ResetRecord) -> str:
    return reset_pk(record.owner, record.account_id)


class Resets:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, owner: CallerId, account_id: str) -> ResetRecord | None:
        item = self.table.get(reset_pk(owner, account_id), RESET_SK)
        return reset_from(item) if item else None

    def consume(self, owner: CallerId, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        """Active + hash matches + not expired → consumed, in one conditional write."""
        update = Update().set("state", "consumed")
        update.when(update.equals("state", "active"))
        update.when(update.equals("token_hash", token_hash))
        update.when(update.above("valid_until", iso(now)))
        try:
            item = self.table.update(reset_pk(owner, account_id), RESET_SK, update, returning="ALL_NEW")
        except ConditionFailed:
            return None
        consumed = reset_from(item)
        self._record_end(consumed, HistoryEntry(at=now, type=HistoryType.RESET_CONSUMED, step=END_STEP))
        return consumed

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None:
        """Count a wrong token; the attempt that reaches the limit invalidates the reset."""
        count = Update().add("failed_attempts", 1)
        self._live(count, record)
        try:
            counted = self.table.update(_pk(record), RESET_SK, count, returning="UPDATED_NEW")
            if int(counted.get("failed_attempts", {}).get("N", 0)) >= max_attempts:
                invalidate = Update().set("state", "invalidated")
                self._live(invalidate, record)
                self.table.update(_pk(record), RESET_SK, invalidate)
                entry = HistoryEntry(
                    at=now, type=HistoryType.RESET_LOCKED, evidence={"failed_attempts": max_attempts}, step=END_STEP
                )
                self._record_end(record, entry)
        except ConditionFailed:
            pass  # replaced or consumed meanwhile: nothing left to lock

    def _record_end(self, record: ResetRecord, entry: HistoryEntry) -> None:
        """The reset's end, in its mail's history: the record itself is overwritten by the next
        reset. A second write: if it is lost, the record still says how the reset ended until then."""
        append = history.append(Update(), entry)
        append.when(append.present("pk"))
        with contextlib.suppress(ConditionFailed):
            self.table.update(message_pk(record.message_id), MESSAGE_SK, append)

    def _live(self, update: Update, record: ResetRecord) -> None:
        update.when(update.equals("reset_id", record.reset_id))
        update.when(update.equals("state", "active"))

    def rearm(
        self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry, lease_until: datetime
    ) -> bool:
        """Swap the token hash and start the send, unless the address got suppressed meanwhile."""
        # Wrong tokens keep counting across mints: the lockout is per reset, not per link.
        swap = Update().set("token_hash", new_token_hash)
        self._live(swap, record)
        swap.when(swap.equals("token_hash", record.token_hash))
        start = Update().set("state", MessageState.SENDING.value).set("attempt", message.attempt)
        start.set("updated_at", iso(entry.at))
        set_due(start, message.message_id, (DueKind.INFLIGHT, lease_until))
        history.append(start, entry)
        state_in(start, predecessors(MessageState.SENDING))
        tx = self.table.transaction()
        tx.update("reset", _pk(record), RESET_SK, swap)
        tx.update("message", message_pk(message.message_id), MESSAGE_SK, start)
        recipients.check_not_suppressed(tx, message.recipient_key)
        e = Expression()  # no event recorded for an earlier mail (it would prove acceptance)
        tx.check("receipt", message_pk(message.message_id), MESSAGE_RECEIPT_SK, e.absent("pk"), e)
        try:
            tx.commit()
        except Cancelled as cancelled:
            if set(cancelled.failed) == {"recipient"}:
                return False
            raise DependencyUnavailable("reset changed concurrently; retry", retry_after_seconds=1) from None
        return True
