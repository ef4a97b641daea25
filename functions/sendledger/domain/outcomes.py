"""What a delivery event proves about its message: the state it moves to, from which states
it may, and how a receipt that took events folds into the message."""

from __future__ import annotations

from sendledger.domain.events import DeliveryEvent, EventKind
from sendledger.domain.messages import Message, MessageState, predecessors

# Provider evidence about an earlier attempt of the same message id may arrive while a retry is
# queued (`retry`, `pending`) or after we gave up (`unresolved`): it proves that attempt was
# accepted, which is exactly what must stop the retry from sending a second copy.
_NOT_YET_SETTLED = frozenset(
    {MessageState.SENDING, MessageState.UNKNOWN, MessageState.RETRY, MessageState.PENDING, MessageState.UNRESOLVED}
)
# Including the target itself makes a repeat (the usual Send event after the send path recorded
# `accepted`) a no-op write instead of a failed condition that costs a second request.
_ACCEPTANCE_FROM = _NOT_YET_SETTLED | {MessageState.ACCEPTED}
_OUTCOMES = frozenset({MessageState.DELIVERED, MessageState.BOUNCED, MessageState.COMPLAINED, MessageState.FAILED})
_RECEIPT_STATES = _OUTCOMES | {MessageState.ACCEPTED, MessageState.REJECTED}


def target_state(event: DeliveryEvent) -> MessageState | None:
    """The message state this event proves, or None when it only adds history."""
    return {
        EventKind.SEND: MessageState.ACCEPTED,
        # A delay notice is history, but it also proves the provider accepted the message.
        EventKind.DELIVERY_DELAY: MessageState.ACCEPTED,
        EventKind.DELIVERY: MessageState.DELIVERED,
        # Bounces are published only once the provider stopped retrying: transient ones end the message too.
        EventKind.BOUNCE: MessageState.BOUNCED,
        EventKind.COMPLAINT: MessageState.COMPLAINED,
        EventKind.REJECT: MessageState.REJECTED,
        EventKind.SMS_SUCCESS: MessageState.DELIVERED,
        EventKind.SMS_FAILURE: MessageState.FAILED,
    }.get(event.kind)


def allowed_from(target: MessageState) -> frozenset[MessageState]:
    """States the conditional message update accepts for `target` (never a regression)."""
    if target is MessageState.ACCEPTED:
        return _ACCEPTANCE_FROM
    allowed = predecessors(target) | {target}
    if target in _OUTCOMES:
        allowed |= _NOT_YET_SETTLED
    if target is MessageState.REJECTED:
        # A Reject event comes after the send call succeeded (virus scan): the message is
        # already `accepted` (or `unknown` if the call timed out) when it arrives.
        allowed |= {MessageState.ACCEPTED, MessageState.UNKNOWN, MessageState.UNRESOLVED}
    return frozenset(allowed)


def apply_receipt(message: Message, receipt_state: MessageState | None, reason: str | None) -> None:
    """Fold what the provider's events proved (on the send's receipt) into the message.

    The receipt took each event's state under the same rule (``allowed_from``) the message
    would have, so reading the two together gives the state one combined item would hold.
    """
    if receipt_state is None or receipt_state is message.state or receipt_state not in _RECEIPT_STATES:
        return
    if message.state in allowed_from(receipt_state):
        message.state = receipt_state
        if receipt_state in (MessageState.DELIVERED, MessageState.ACCEPTED):
            # Acceptance or delivery proven: a reason such as the send's ReadTimeoutError no
            # longer explains the state (it stays in the history as evidence).
            message.reason = None
        else:
            message.reason = reason or message.reason
