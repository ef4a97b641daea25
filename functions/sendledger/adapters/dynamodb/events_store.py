"""The EventStore port on the ledger table (the ledger's client: one connection, one count)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sendledger.adapters.dynamodb.due_work import DueWork
from sendledger.adapters.dynamodb.escalations import Escalations
from sendledger.adapters.dynamodb.events import EventWriter
from sendledger.adapters.dynamodb.keys import EVENT_SK, RECEIPT_SK, RECIPIENT_SK, receipt_pk, recipient_pk
from sendledger.adapters.dynamodb.ledger import DynamoLedger
from sendledger.adapters.dynamodb.recipients import state_of
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import DueKind, HistoryEntry, MessageState, Transition
from sendledger.ports import ApplyPlan, ApplyResult, DueItem


class DynamoEventStore:
    def __init__(self, ledger: DynamoLedger) -> None:
        self.ledger = ledger
        self.table = ledger.table
        self.events = EventWriter(self.table)
        self.due_work = DueWork(self.table)
        self.escalations = Escalations(self.table)

    def apply_event(self, event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> ApplyResult:
        return self.events.apply(event, plan, now)

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> tuple[str | None, bool]:
        """For a record whose receipt was missing: the receipt (an outcome write may have landed
        since), else the destination's last send if it is inside the window.

        One BatchGetItem for all three (a delivery-status record for the same destination
        inside the send window proves the outcome of a send whose call timed out).
        """
        keys = [(receipt_pk(provider_message_id), RECEIPT_SK)]
        if recipient_key:
            keys.append((recipient_pk(recipient_key), RECIPIENT_SK))
        if dedupe_key:
            keys.append((dedupe_key, EVENT_SK))
        found = {str(item["sk"]["S"]): item for item in self.table.batch_get(keys)}
        applied = EVENT_SK in found
        if RECEIPT_SK in found:
            return str(found[RECEIPT_SK]["message_id"]["S"]), applied
        recipient = state_of(found.get(RECIPIENT_SK))
        sent_at = recipient.last_send_at
        if sent_at is not None and sent_at <= occurred_at <= sent_at + timedelta(seconds=window_seconds):
            return recipient.last_message_id, applied
        return None, applied

    # --- watermarks and cursors ----------------------------------------------------------------
    def set_watermark(self, source: str, at: datetime) -> None:
        self.ledger.poller_state.set_watermark(source, at)

    def get_cursor(self, source: str) -> str | None:
        return self.ledger.poller_state.cursor(source)

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None:
        self.ledger.poller_state.put_cursor(source, previous, cursor, now)

    # --- due work ------------------------------------------------------------------------------
    def due_items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]:
        return self.due_work.items(kind, until, limit)

    def count_due(self, kind: DueKind) -> int:
        return self.due_work.count(kind)

    def clear_due(self, message_id: str, kind: DueKind, receipt_id: str | None = None) -> None:
        self.due_work.clear(message_id, kind, receipt_id)

    def transition(
        self,
        message_id: str,
        allowed: frozenset[MessageState],
        target: MessageState,
        entries: list[HistoryEntry],
        due: tuple[DueKind, datetime] | None,
        attempt: int | None = None,
        unsuppressed: str | None = None,
    ) -> Transition:
        return self.ledger.messages.transition(message_id, allowed, target, entries, due, attempt, unsuppressed)

    def idempotency_key_of(self, message_id: str) -> str | None:
        return self.ledger.messages.idempotency_key_of(message_id)

    def finish_escalation(
        self, message_id: str, entry: HistoryEntry, escalate_message: bool, outcome: str, receipt_id: str | None = None
    ) -> None:
        self.escalations.finish(message_id, entry, escalate_message, outcome, receipt_id)
