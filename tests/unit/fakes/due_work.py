"""The due-work index: every item that carries a due marker (messages, receipts, timers)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import datetime

from sendledger.domain.messages import DueKind
from sendledger.ports.ingestion import DueItem
from tests.unit.fakes import receipts
from tests.unit.fakes.messages import MessageItem
from tests.unit.fakes.receipts import Receipt
from tests.unit.fakes.state import LedgerState


class FakeDueWork:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]:
        with self.db.lock:
            cutoff = int(until.timestamp()) if until is not None else None
            found = [item for item in self._index() if item.kind is kind and (cutoff is None or item.due_at <= cutoff)]
        return sorted(found, key=lambda item: item.due_at)[:limit]

    def count(self, kind: DueKind) -> int:
        with self.db.lock:
            return sum(1 for item in self._index() if item.kind is kind)

    def nothing_due(self, until: datetime) -> bool:
        with self.db.lock:
            cutoff = int(until.timestamp())
            return not any(item.due_at <= cutoff or item.kind is DueKind.UNKNOWN for item in self._index())

    def clear(self, message_id: str, kind: DueKind, receipt_id: str | None = None, on_receipt: bool = False) -> None:
        with self.db.lock:
            holder: Receipt | MessageItem | None
            if receipt_id or on_receipt:
                key = receipts.of_sms(receipt_id) if receipt_id else receipts.of_message(message_id)
                holder = self.db.receipts.get(key)
            else:
                holder = self.db.messages.get(message_id)
            if holder is not None and holder.due is not None and holder.due[0] is kind:
                holder.due = None  # else: already moved on to other work

    def reschedule(self, message_id: str, kind: DueKind, due_at: datetime, was: DueKind | None = None) -> None:
        with self.db.lock:
            item = self.db.messages.get(message_id)
            if item is not None and item.due is not None and item.due[0] is (was or kind):
                item.due = (kind, due_at)

    def _index(self) -> Iterator[DueItem]:
        """What the sparse index projects: message_id, state, escalation, idem_key, escalates."""
        for message_id, item in self.db.messages.items():
            if item.due is not None:
                escalation = copy.deepcopy(item.message.escalation)
                yield DueItem(
                    kind=item.due[0],
                    message_id=message_id,
                    due_at=int(item.due[1].timestamp()),
                    state=item.message.state.value,
                    escalation=escalation,
                    idempotency_key=item.key.key if item.key else None,
                    escalates=escalation is not None,
                )
        for key, receipt in self.db.receipts.items():
            if receipt.due is not None:
                on_receipt = key[0] == receipts.OF_MESSAGE
                yield DueItem(
                    kind=receipt.due[0],
                    message_id=receipt.message_id or (key[1] if on_receipt else f"PMID#{key[1]}"),
                    due_at=int(receipt.due[1].timestamp()),
                    state=receipt.state.value if receipt.state else "",
                    receipt_id=None if on_receipt else key[1],
                    on_receipt=on_receipt,
                    # An event cannot know whether the message escalates: the poller reads it.
                    escalates=receipt.escalates is not False or on_receipt,
                )
        for message_id, timer in self.db.timers.items():
            if timer.due is not None:
                yield DueItem(
                    kind=timer.due[0],
                    message_id=message_id,
                    due_at=int(timer.due[1].timestamp()),
                    state=timer.state,
                    escalation=copy.deepcopy(timer.escalation),
                    escalates=True,
                )
