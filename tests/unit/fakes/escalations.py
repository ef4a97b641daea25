"""The escalation timer beside the message, and finishing an escalation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sendledger.domain.escalation import Escalation
from sendledger.domain.messages import DueKind, HistoryEntry, Message, MessageState
from tests.unit.fakes import receipts
from tests.unit.fakes.state import LedgerState

SCHEDULED, DONE = "scheduled", "done"


@dataclass
class Timer:
    message_id: str
    escalation: Escalation
    state: str = SCHEDULED
    outcome: str | None = None
    due: tuple[DueKind, datetime] | None = None


def schedule(db: LedgerState, message: Message) -> None:
    """Written with the intent (a put: it replaces any timer of the same message)."""
    assert message.escalation is not None
    deadline = message.created_at + timedelta(seconds=message.escalation.deadline_seconds)
    db.timers[message.message_id] = Timer(message.message_id, message.escalation, due=(DueKind.ESCALATION, deadline))


class FakeEscalationTimers:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def finish(
        self, message_id: str, entry: HistoryEntry, escalate_message: bool, outcome: str, receipt_id: str | None = None
    ) -> None:
        with self.db.lock:
            timer = self.db.timers.get(message_id)
            if timer is None or timer.state != SCHEDULED:
                return  # already finished by an earlier run
            item = self.db.messages.get(message_id)
            if escalate_message and (item is None or self._delivered(item.message.state, message_id, receipt_id)):
                escalate_message = False  # delivered meanwhile: record, do not claim escalated
            timer.state, timer.outcome, timer.due = DONE, outcome, None
            if item is None:
                return  # (the table would hold a stub item with just the entry)
            if escalate_message:
                item.move(MessageState.ESCALATED, [entry], None)
            else:
                item.history.append(entry)

    def _delivered(self, state: MessageState, message_id: str, receipt_id: str | None) -> bool:
        if state in (MessageState.DELIVERED, MessageState.ESCALATED):
            return True
        keys = [receipts.of_message(message_id)] + ([receipts.of_sms(receipt_id)] if receipt_id else [])
        found = [self.db.receipts[key] for key in keys if key in self.db.receipts]
        return any(receipt.state is MessageState.DELIVERED for receipt in found)
