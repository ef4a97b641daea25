"""GET /v1/messages/{message_id}: the message with its append-only history."""

from __future__ import annotations

from sendledger.domain.callers import CallerId
from sendledger.domain.messages import Message
from sendledger.usecases.context import Services


def get_message(services: Services, message_id: str, caller: CallerId) -> Message | None:
    """A caller sees the messages its own requests created (others are indistinguishable from absent)."""
    message = services.messages.get(message_id) if message_id.startswith("msg_") else None
    if message is None or message.owner != caller:
        return None
    return message
