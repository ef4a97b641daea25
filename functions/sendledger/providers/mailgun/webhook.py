"""Mailgun's signed webhooks: HMAC-SHA256 of timestamp + token (signature.py), one event per POST.

The signature covers only the timestamp and the token, not the event: the token is single-use
(the intake claims it before anything is queued), so a captured signature block cannot be
replayed with another event, and the timestamp must be within MAILGUN_WEBHOOK_MAX_AGE_SECONDS.
The event is queued as Mailgun sent it (`event-data`) for the poller's webhook lane. Polling the
Events API stays the complete path: Mailgun never retries a `delivered` webhook.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sendledger.domain.events import MalformedEvent
from sendledger.ports.webhooks import Refused, Verified, WebhookOutcome
from sendledger.providers.mailgun.events import parse_event
from sendledger.providers.mailgun.signature import SignatureCheck, check_signature, signature_block

# One event per POST; Mailgun's are a few KB.
MAX_BODY_BYTES = 64 * 1024


@dataclass
class MailgunIntake:
    signing_key: Callable[[], str]  # read through the secret cache; a fault is a 503
    max_age_seconds: int
    max_body_bytes: int = MAX_BODY_BYTES

    def verify(self, headers: Mapping[str, str], body: bytes, now: datetime) -> Verified | Refused:
        try:
            document = json.loads(body)
        except ValueError:
            return Refused(WebhookOutcome.UNSIGNED, "no signature")
        block = signature_block(document) if isinstance(document, dict) else None
        check = check_signature(block, self.signing_key().encode(), now, self.max_age_seconds)
        if check is SignatureCheck.STALE:
            return Refused(WebhookOutcome.STALE, "the signature's timestamp is too old or in the future")
        if check is SignatureCheck.MISSING or block is None:
            return Refused(WebhookOutcome.UNSIGNED, "no signature")
        if check is not SignatureCheck.VALID:
            return Refused(WebhookOutcome.BAD_SIGNATURE, "the signature does not verify")
        try:
            bodies = queued_bodies(document.get("event-data"))
        except MalformedEvent as exc:
            return Refused(WebhookOutcome.MALFORMED, f"not a Mailgun event: {exc}")
        # Remembered twice as long as a timestamp is accepted: a replay inside the window is caught.
        return Verified(bodies, received=1, token_hash=block.token_hash, replay_window_seconds=2 * self.max_age_seconds)


def queued_bodies(data: Any) -> list[str]:
    """What the events queue holds for a verified POST's `event-data`: the event as Mailgun sent
    it, or nothing for one that proves nothing (MalformedEvent for one that is not an event).
    Test mode's simulated Mailgun queues its events in this shape (simulation.py)."""
    event = parse_event(data)
    return [json.dumps(data, separators=(",", ":"), sort_keys=True)] if event is not None else []
