"""The escalation timer (`ESC` beside the message) and finishing an escalation."""

from __future__ import annotations

from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import Expression, Update
from sendledger.adapters.dynamodb.keys import (
    ESCALATION_SK,
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RECEIPT_SK,
    message_pk,
    receipt_pk,
)
from sendledger.adapters.dynamodb.states import DUE_AT, DUE_KIND, STATE, state_in
from sendledger.adapters.dynamodb.table import Cancelled, Table, Transaction
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import HistoryEntry, MessageState


class Escalations:
    def __init__(self, table: Table) -> None:
        self.table = table

    def finish(
        self, message_id: str, entry: HistoryEntry, escalate_message: bool, outcome: str, receipt_id: str | None = None
    ) -> None:
        """Timer done + (message → escalated) + history, in one transaction; idempotent.

        Delivery events land on the send's receipts, so those are checked too: an event that
        proved delivery meanwhile stops the escalated claim.
        """
        for _ in range(2):
            tx = self.table.transaction()
            timer = Update().set(STATE, "done").set("outcome", outcome).set("updated_at", iso(entry.at))
            timer.remove(DUE_KIND, DUE_AT).when(timer.equals(STATE, "scheduled"))
            tx.update("escalation", message_pk(message_id), ESCALATION_SK, timer)
            update = Update()
            if escalate_message:
                update.set(STATE, MessageState.ESCALATED.value).set("updated_at", iso(entry.at))
                update.remove(DUE_KIND, DUE_AT)
                state_in(update, [s for s in MessageState if s not in (MessageState.DELIVERED, MessageState.ESCALATED)])
                _not_delivered(tx, "receipt", message_pk(message_id), MESSAGE_RECEIPT_SK)
                if receipt_id:
                    _not_delivered(tx, "sms_receipt", receipt_pk(receipt_id), RECEIPT_SK)
            history.append(update, entry)
            update.when(update.present("pk"))  # never a stub message item
            tx.update("message", message_pk(message_id), MESSAGE_SK, update)
            try:
                tx.commit()
                return
            except Cancelled as cancelled:
                if "escalation" in cancelled.failed:
                    return  # already finished by an earlier run
                if {"message", "receipt", "sms_receipt"} & set(cancelled.failed):
                    escalate_message = False  # delivered meanwhile: record, do not claim escalated
                    continue
                raise DependencyUnavailable("escalation write conflicted; retry", retry_after_seconds=1) from None


def _not_delivered(tx: Transaction, label: str, pk: str, sk: str) -> None:
    e = Expression()
    condition = e.absent("pk") | e.differs(STATE, MessageState.DELIVERED.value)
    tx.check(label, pk, sk, condition, e)
