"""Public JSON views of ledger records (never tokens, never internal keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sendledger.domain.clock import iso
from sendledger.domain.messages import Message, MessageState

if TYPE_CHECKING:
    # pydantic loads with the composition root, not with every handler module.
    from sendledger.settings import Settings


def retry_after(message: Message, settings: Settings) -> int | None:
    if message.state is MessageState.UNKNOWN:
        return max(settings.poll_interval_seconds, settings.unknown_grace_seconds)
    if message.state in (MessageState.PENDING, MessageState.SENDING, MessageState.RECEIVED, MessageState.RETRY):
        return max(1, settings.poll_interval_seconds)
    return None


def message_view(message: Message, settings: Settings, with_history: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "message_id": message.message_id,
        "state": message.state.value,
        "channel": message.channel.value,
        "to": message.to,
        "template": {"id": message.template.id, "version": message.template.version},
        "category": message.category,
        "provider": message.provider,
        "provider_message_id": message.provider_message_id,
        "reason": message.reason,
        "created_at": iso(message.created_at),
        "updated_at": iso(message.updated_at),
    }
    wait = retry_after(message, settings)
    if wait is not None:
        view["retry_after_seconds"] = wait
    if with_history:
        view["history"] = [
            {
                "at": iso(entry.at),
                "type": entry.type,
                "state": entry.state.value if entry.state else None,
                **entry.evidence,
            }
            for entry in message.history
        ]
    return view
