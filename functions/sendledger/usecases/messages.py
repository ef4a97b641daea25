"""GET /v1/messages/{message_id}: the message with its append-only history."""

from __future__ import annotations

from sendledger.domain.callers import CallerId
from sendledger.domain.messages import Message
from sendledger.ports.messages import MessageStore


def get_message(messages: MessageStore, message_id: str, caller: CallerId) -> Message | None:
    """A caller sees the messages its own requests created (others are indistinguishable from absent)."""
    message = messages.get(message_id) if message_id.startswith("msg_") else None
    if message is None or message.owner != caller:
        return None
    return message
