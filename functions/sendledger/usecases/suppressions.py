"""Suppression view and the audited admin acts (suppress, re-enable)."""

from __future__ import annotations

from sendledger.domain.recipients import recipient_from_key
from sendledger.usecases.context import Services
from sendledger.usecases.results import SuppressionStatus


def view_suppression(services: Services, raw_recipient: str) -> SuppressionStatus:
    recipient = recipient_from_key(raw_recipient)
    view = services.recipients.view(recipient.key)
    return SuppressionStatus(recipient.address, view.state, view.history)


def change_suppression(
    services: Services, raw_recipient: str, suppressed: bool, reason: str, actor: str
) -> SuppressionStatus:
    recipient = recipient_from_key(raw_recipient)
    current = services.recipients.view(recipient.key).state
    now = services.clock.now()
    if current.suppressed == suppressed:  # a repeated PUT or DELETE: record the act, change no state
        services.recipients.record_unchanged(recipient.key, suppressed, reason, actor, current.version, now)
    else:
        services.recipients.change(recipient.key, suppressed, reason, actor, expected_version=current.version, now=now)
    return view_suppression(services, raw_recipient)
