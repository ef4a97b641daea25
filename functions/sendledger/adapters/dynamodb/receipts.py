"""A send's receipt: where the provider's delivery events land, beside the message they explain.

Events never write the message item: it carries the intent, the key's stored answer and the
send path's history, and rewriting it for every event would bill its whole size each time. A
receipt is small and holds what the events proved (state, reason), their history entries, and
the due-work marker an outcome sets. Reading a message folds its receipt in.

- `MSG#<message id>` / `RCPT`: for events that name our message id (email tags; SMS records
  matched to a send whose Publish answer we never got). Created by the first event.
- `PMID#<provider id>` / `PMID`: an accepted SMS's receipt, since an SMS status record names
  only the provider's message id. The publisher writes it from the outcome's stream record
  (sms_receipts.py), off the send path; a status record that arrives first and whose send is
  known (usecases/ingest.py) creates it, naming the message.
"""

from __future__ import annotations

from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import Item
from sendledger.adapters.dynamodb.keys import MESSAGE_RECEIPT_SK, RECEIPT_SK, message_pk, receipt_pk
from sendledger.domain import evidence
from sendledger.domain.clock import parse_iso
from sendledger.domain.messages import HistoryEntry, Message, MessageState
from sendledger.domain.outcomes import apply_receipt
from sendledger.domain.provider import source_of
from sendledger.domain.recipients import fingerprint_of
from sendledger.domain.values import value


@value
class ReceiptKey:
    pk: str
    sk: str
    by_provider_id: bool  # an SMS receipt: events create it only once they know its message


def of_message(message_id: str) -> ReceiptKey:
    return ReceiptKey(message_pk(message_id), MESSAGE_RECEIPT_SK, by_provider_id=False)


def of_sms(provider_message_id: str) -> ReceiptKey:
    return ReceiptKey(receipt_pk(provider_message_id), RECEIPT_SK, by_provider_id=True)


def fold(message: Message, receipt: Item) -> None:
    """What a receipt's events proved, read into its message."""
    if receipt.get("message_id", {}).get("S", message.message_id) != message.message_id:
        return  # a provider id reused by another message: not this send's evidence
    state = receipt.get("state", {}).get("S")
    if state:
        before = message.state
        apply_receipt(message, MessageState(state), receipt.get("reason", {}).get("S"))
        if message.state is not before and "updated_at" in receipt:
            message.updated_at = max(message.updated_at, parse_iso(receipt["updated_at"]["S"]))
    if message.provider_message_id is None and "provider_message_id" in receipt:
        message.provider_message_id = receipt["provider_message_id"]["S"]


def history_of(message: Message, receipt: Item) -> list[tuple[str, HistoryEntry]]:
    """The receipt's entries as readers see them (evidence.as_read)."""
    provider_message_id = history.provider_message_id_of(receipt)
    source = source_of(message.provider)
    recipient = fingerprint_of(message.recipient_key)
    return [
        (
            key,
            evidence.as_read(
                entry,
                provider=message.provider,
                source=source,
                recipient=recipient,
                provider_message_id=provider_message_id,
            ),
        )
        for key, entry in history.entries_of(receipt)
    ]
