"""Status events: what a committed state change tells the outside, and its stable id.

A message's state is written in two places (the message item, and the receipt its delivery
events land on), so the same change can be seen twice: a provider's Send event and the send's own
outcome both say `accepted`. The id makes the two one event. States a message enters at most
once (acceptance and everything after it: outcomes only move forward) are identified by the
message and the state alone; the states a retry re-enters (`sending`, `unknown`, `retry`,
`pending`) also by the write that entered them, which only the message item makes.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any

from sendledger.domain import test_mode
from sendledger.domain.clock import iso
from sendledger.domain.messages import TERMINAL, Message, MessageState, sms_json, template_view
from sendledger.domain.outcomes import allowed_from
from sendledger.domain.values import value

SOURCE = "sendledger"
EVENTS_ACTOR = "sendledger-events"  # who suppresses on a delivery event's evidence
_ENTERED_ONCE = TERMINAL | {MessageState.ACCEPTED}
# A message event's detail names the caller that owns the message: its callback goes to that
# caller alone. A suppression belongs to no caller (one recipient, every caller's sends).
OWNER_FIELD = "caller_id"


class DetailType(StrEnum):
    MESSAGE_STATE_CHANGED = "sendledger.message.state-changed"
    SUPPRESSION_CHANGED = "sendledger.suppression.changed"


@value
class StatusEvent:
    event_id: str
    detail_type: DetailType
    occurred_at: datetime
    detail: dict[str, Any]  # JSON-ready; carries event_id and occurred_at itself


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def message_event_id(message_id: str, state: MessageState, write: str) -> str:
    """Stable across re-deliveries: derived from the change, never from the stream record."""
    if state in _ENTERED_ONCE:
        return _digest("message", message_id, state.value)
    return _digest("message", message_id, state.value, write)


def suppression_event_id(recipient_key: str, version: int) -> str:
    # Every change moves the version by one: (recipient, version) names exactly one change.
    return _digest("suppression", recipient_key, str(version))


def message_state_changed(
    message: Message,
    previous: MessageState | None,
    *,
    write: str,
    occurred_at: datetime,
    business_event_id: str | None = None,
) -> StatusEvent:
    event_id = message_event_id(message.message_id, message.state, write)
    detail = {
        "event_id": event_id,
        "message_id": message.message_id,
        "state": message.state.value,
        "previous_state": previous.value if previous is not None else None,
        "channel": message.channel.value,
        "to": message.to,
        "template": template_view(message.template),
        "category": message.category,
        "reason": message.reason,
        "provider": message.provider,
        "provider_message_id": message.provider_message_id,
        "business_event_id": business_event_id,
        OWNER_FIELD: message.owner,
        "occurred_at": iso(occurred_at),
        **({"test": True} if message.test else {}),  # a test caller's (only when true)
        **({"sms": sms_json(message.sms)} if message.sms else {}),  # what the carrier bills
    }
    return StatusEvent(event_id, DetailType.MESSAGE_STATE_CHANGED, occurred_at, detail)


def suppression_changed(
    recipient_key: str, *, suppressed: bool, reason: str | None, version: int, actor: str, occurred_at: datetime
) -> StatusEvent:
    event_id = suppression_event_id(recipient_key, version)
    real = test_mode.real_key(recipient_key)  # a test caller's key names its caller first
    detail = {
        "event_id": event_id,
        "recipient": real.partition(":")[2] or real,  # the key is `<channel>:<address>`
        "suppressed": suppressed,
        "reason": reason,
        "version": version,
        "actor": actor,
        "occurred_at": iso(occurred_at),
        # A test caller's recipient is that caller's alone: its change goes to that caller.
        **({"test": True, OWNER_FIELD: test_mode.caller_of_key(recipient_key)} if real != recipient_key else {}),
    }
    return StatusEvent(event_id, DetailType.SUPPRESSION_CHANGED, occurred_at, detail)


def actor_of(source_event: str | None) -> str:
    """An admin act is stored as `admin:<caller>`; anything else came from a delivery event."""
    if source_event and source_event.startswith("admin:"):
        return source_event.removeprefix("admin:")
    return EVENTS_ACTOR


def receipt_previous(
    message_state: MessageState, receipt_before: MessageState | None, receipt_after: MessageState
) -> MessageState | None:
    """The state a receipt's change moved the message from, as a reader saw it.

    The receipt's own earlier state when it had one; else the message item's, when the new
    state may follow it (a message escalated since has moved past: unknown, so None).
    """
    if receipt_before is not None:
        return receipt_before
    if message_state is not receipt_after and message_state in allowed_from(receipt_after):
        return message_state
    return None
