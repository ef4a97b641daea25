"""GET /v1/messages/{message_id}: the message with its append-only history."""

from __future__ import annotations

from sendledger.domain.errors import NotFound
from sendledger.domain.idempotency import caller_id
from sendledger.usecases.context import Reply, Services
from sendledger.usecases.views import message_view, retry_after


def get_message(services: Services, message_id: str, principal: str) -> Reply:
    """A caller sees the messages its own requests created (others are indistinguishable from absent)."""
    message = services.ledger.get_message(message_id) if message_id.startswith("msg_") else None
    if message is None or message.owner != caller_id(principal):
        raise NotFound(f"no message {message_id!r}")
    return Reply(
        200, message_view(message, services.settings, with_history=True), retry_after(message, services.settings)
    )
