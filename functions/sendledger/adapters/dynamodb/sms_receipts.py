"""Accepted SMS's receipts, written by the publisher from the message item's stream record.

An SMS's outcome is one UpdateItem on its message, as an email's: the receipt that maps SNS's
message id to ours (a status record names only SNS's) is not in that write. The change that
set the message's `provider_message_id` (NEW_AND_OLD_IMAGES) carries all the receipt needs.

The write merges: a status record that came first (usecases/ingest.py matched it through the
number's recent sends) created the receipt with its state and history, and nothing here
touches those. Written again (a stream batch retried), it changes nothing.
"""

from __future__ import annotations

from typing import Any

from sendledger.adapters.dynamodb.expressions import Update
from sendledger.adapters.dynamodb.keys import MESSAGE_PK_PREFIX, MESSAGE_SK, RECEIPT_SK, receipt_pk
from sendledger.adapters.dynamodb.stream import item_change, text_of
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.recipients import Channel
from sendledger.ports.status_out import AcceptedSms

PROVIDER_MESSAGE_ID = "provider_message_id"
# On the receipt: whether its message escalates (an outcome marker's poller reads the message
# only then). Absent on a receipt a status record created first: the poller reads the message.
ESCALATES = "escalates"


class SmsReceiptItems:
    def __init__(self, table: Table) -> None:
        self.table = table

    def accepted_of(self, record: dict[str, Any]) -> AcceptedSms | None:
        change = item_change(record, MESSAGE_SK)
        if change is None:
            return None
        keys, old, new = change
        provider_id = text_of(new, PROVIDER_MESSAGE_ID)
        if text_of(new, "channel") != Channel.SMS.value or provider_id is None:
            return None
        if provider_id == text_of(old, PROVIDER_MESSAGE_ID):
            return None  # learned before: this change is another one (an event's, a label)
        message_id = str(keys["pk"]["S"]).removeprefix(MESSAGE_PK_PREFIX)
        return AcceptedSms(message_id=message_id, provider_message_id=provider_id, escalates="escalation" in new)

    def write(self, accepted: AcceptedSms) -> None:
        # if_not_exists: a provider id is the receipt's key, so the first message to name it keeps it
        update = Update().set_if_absent("message_id", accepted.message_id).set(ESCALATES, accepted.escalates)
        self.table.update(receipt_pk(accepted.provider_message_id), RECEIPT_SK, update)
