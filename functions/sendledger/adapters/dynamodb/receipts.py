"""The SMS receipt: SNS's message id → the message, and what SNS's status records reported.

An SNS delivery-status record names only SNS's message id, so its outcome lands here in one
write with no lookup; reading the message merges its receipt.
"""

from __future__ import annotations

from sendledger.adapters.dynamodb.keys import RECEIPT_SK, receipt_pk
from sendledger.adapters.dynamodb.table import Item, encode_item
from sendledger.domain.clock import iso
from sendledger.domain.messages import MessageState
from sendledger.domain.recipients import Channel
from sendledger.ports import Outcome


def for_outcome(outcome: Outcome) -> Item | None:
    """The receipt an accepted SMS's outcome writes beside the message (None for anything else)."""
    response, message = outcome.response, outcome.message
    if message.channel is not Channel.SMS or response is None or not response.provider_message_id:
        return None
    return encode_item(
        {
            "pk": receipt_pk(response.provider_message_id),
            "sk": RECEIPT_SK,
            "message_id": message.message_id,
            "state": MessageState.ACCEPTED.value,
            "updated_at": iso(outcome.entry.at),
            "escalates": True if message.escalation else None,
        }
    )
