"""`allow` sends' eligibility labels: read from the recipient's stream record, appended to the message.

An `allow` send's recipient update records the marker it replaced and its intent's cutoff
(recipients.for_send); its stream record (NEW_AND_OLD_IMAGES) carries them in the new image.
Only a write that moved the marker to another message is a send's: an event's or an admin's
write to the same item keeps the last send's recorded inputs, already labelled.
"""

from __future__ import annotations

import contextlib
from typing import Any

from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import Update
from sendledger.adapters.dynamodb.keys import MESSAGE_SK, RECIPIENT_SK, message_pk
from sendledger.adapters.dynamodb.recipients import (
    LAST_MESSAGE_ID,
    LAST_SEND_AT,
    PREVIOUS_MESSAGE_ID,
    PREVIOUS_SEND_AT,
    STALE_AFTER,
)
from sendledger.adapters.dynamodb.stream import item_change, text_of
from sendledger.adapters.dynamodb.table import ConditionFailed, Table
from sendledger.domain.clock import parse_iso
from sendledger.domain.eligibility import RecordedSend
from sendledger.domain.messages import HistoryEntry


class StalenessLabels:
    def __init__(self, table: Table) -> None:
        self.table = table

    def recorded_send(self, record: dict[str, Any]) -> RecordedSend | None:
        change = item_change(record, RECIPIENT_SK)
        if change is None:
            return None
        _, old, new = change
        message_id, sent_at = text_of(new, LAST_MESSAGE_ID), text_of(new, LAST_SEND_AT)
        if STALE_AFTER not in new or message_id is None or sent_at is None:
            return None
        if message_id == text_of(old, LAST_MESSAGE_ID):
            return None
        previous, cutoff = text_of(new, PREVIOUS_SEND_AT), text_of(new, STALE_AFTER)
        return RecordedSend(
            message_id=message_id,
            sent_at=parse_iso(sent_at),
            previous_send_at=parse_iso(previous) if previous else None,
            previous_message_id=text_of(new, PREVIOUS_MESSAGE_ID),
            stale_after=parse_iso(cutoff) if cutoff else None,
        )

    def label(self, message_id: str, entry: HistoryEntry) -> None:
        update = history.append_label(Update(), entry)
        update.when(update.present("pk"))
        with contextlib.suppress(ConditionFailed):  # labelled already, or no such message
            self.table.update(message_pk(message_id), MESSAGE_SK, update)
