"""Suppression views by audience and the audited admin acts (suppress, re-enable)."""

from __future__ import annotations

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.recipients import recipient_from_key
from sendledger.domain.suppression_views import client_history, reason_class
from sendledger.ports.messages import MessageStore
from sendledger.ports.recipients import RecipientStore
from sendledger.usecases.results import SuppressionStatus


def view_suppression(recipients: RecipientStore, raw_recipient: str) -> SuppressionStatus:
    """The admin's view: the whole history, actors and free-text reasons included."""
    recipient = recipient_from_key(raw_recipient)
    view = recipients.view(recipient.key)
    return SuppressionStatus(recipient.address, view.state, view.history, reason_class(view.state.reason, view.history))


def client_view(
    recipients: RecipientStore, messages: MessageStore, raw_recipient: str, caller: CallerId
) -> SuppressionStatus:
    """A caller's view: the state, its class, and the entries its own messages caused."""
    full = view_suppression(recipients, raw_recipient)

    def owns(message_id: str) -> bool:
        message = messages.get(message_id)
        return message is not None and message.owner == caller

    return SuppressionStatus(full.recipient, full.state, client_history(full.history, owns), full.reason_class)


def change_suppression(
    recipients: RecipientStore, clock: Clock, raw_recipient: str, suppressed: bool, reason: str, actor: str
) -> SuppressionStatus:
    recipient = recipient_from_key(raw_recipient)
    current = recipients.view(recipient.key).state
    now = clock.now()
    if current.suppressed == suppressed:  # a repeated PUT or DELETE: record the act, change no state
        recipients.record_unchanged(recipient.key, suppressed, reason, actor, current.version, now)
    else:
        recipients.change(recipient.key, suppressed, reason, actor, expected_version=current.version, now=now)
    return view_suppression(recipients, raw_recipient)
