"""A send's receipts: where delivery events land, beside the message they explain.

`("RCPT", <message id>)`: events that name our message id, created by the first one.
`("PMID", <SNS message id>)`: an accepted SMS's receipt, written by the publisher from the
outcome's stream record (`write_accepted`), or by a status record that found its send first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sendledger.domain import evidence
from sendledger.domain.messages import DueKind, Message, MessageState
from sendledger.domain.outcomes import apply_receipt
from sendledger.domain.provider import source_of
from sendledger.domain.recipients import Channel, fingerprint_of
from sendledger.ports.status_out import AcceptedSms
from tests.unit.fakes.history import History
from tests.unit.fakes.state import LedgerState

ReceiptKey = tuple[str, str]
OF_MESSAGE, OF_SMS = "RCPT", "PMID"


def of_message(message_id: str) -> ReceiptKey:
    return (OF_MESSAGE, message_id)


def of_sms(provider_message_id: str) -> ReceiptKey:
    return (OF_SMS, provider_message_id)


@dataclass
class Receipt:
    key: ReceiptKey
    message_id: str | None = None
    provider_message_id: str | None = None
    state: MessageState | None = None
    reason: str | None = None
    updated_at: datetime | None = None
    due: tuple[DueKind, datetime] | None = None
    escalates: bool | None = None  # an SMS receipt's flag; None: not written yet (the poller reads the message)
    history: History = field(default_factory=History)

    @property
    def by_provider_id(self) -> bool:
        """An SMS receipt: keyed by the provider's message id."""
        return self.key[0] == OF_SMS


class FakeSmsReceipts:
    """The publisher's write (adapters/dynamodb/sms_receipts.py), merged with what is there.
    No stream here: a test hands it the accepted SMS the outcome's stream record would carry."""

    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def write(self, accepted: AcceptedSms) -> None:
        key = of_sms(accepted.provider_message_id)
        with self.db.lock:
            receipt = self.db.receipts.setdefault(key, Receipt(key))
            if receipt.message_id is None:
                receipt.message_id = accepted.message_id
            receipt.escalates = accepted.escalates


def receipts_of(db: LedgerState, message: Message) -> list[Receipt]:
    """The message's own receipt, then (an accepted SMS) the one under SNS's message id."""
    keys = [of_message(message.message_id)]
    if message.channel is Channel.SMS and message.provider_message_id:
        keys.append(of_sms(message.provider_message_id))
    return [db.receipts[key] for key in keys if key in db.receipts]


def fold(message: Message, receipt: Receipt) -> None:
    """What a receipt's events proved, read into its message."""
    if receipt.message_id is not None and receipt.message_id != message.message_id:
        return  # an SNS id reused by another message: not this send's evidence
    if receipt.state is not None:
        before = message.state
        apply_receipt(message, receipt.state, receipt.reason)
        if message.state is not before and receipt.updated_at is not None:
            message.updated_at = max(message.updated_at, receipt.updated_at)
    if message.provider_message_id is None and receipt.provider_message_id is not None:
        message.provider_message_id = receipt.provider_message_id


def as_read(message: Message, receipt: Receipt) -> History:
    """The receipt's history as readers see it (what each event's entry leaves implied)."""
    provider_message_id = receipt.provider_message_id or (receipt.key[1] if receipt.by_provider_id else None)
    source = source_of(message.provider)
    recipient = fingerprint_of(message.recipient_key)
    return receipt.history.mapped(
        lambda entry: evidence.as_read(
            entry,
            provider=message.provider,
            source=source,
            recipient=recipient,
            provider_message_id=provider_message_id,
        )
    )
