"""SendGrid's Signed Event Webhook: verified over the raw body, split into its delivery events.

ECDSA P-256 over the timestamp header followed by the raw body (signature.py); timestamps
older than SENDGRID_WEBHOOK_MAX_AGE_SECONDS are refused. Engagement events (open, click,
unsubscribe, group_*) prove nothing about delivery and are not queued; anything else, even an
event the parser cannot read, is (an unreadable one ends in the dead-letter queue, as evidence).
Dedupe is the apply's (by `sg_event_id`): SendGrid signs no single-use token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sendledger.domain.events import MalformedEvent
from sendledger.ports.webhooks import Refused, Verified, WebhookOutcome, WebhookVerifier
from sendledger.providers.sendgrid.events import ENGAGEMENT, SIGNATURE_HEADER, TIMESTAMP_HEADER, parse_batch

# A SendGrid batch is posted at 768 KB at most; a larger body is refused (413).
MAX_BODY_BYTES = 1024 * 1024


@dataclass
class SendGridIntake:
    verifier: WebhookVerifier
    max_age_seconds: int
    max_body_bytes: int = MAX_BODY_BYTES

    def verify(self, headers: Mapping[str, str], body: bytes, now: datetime) -> Verified | Refused:
        timestamp, signature = headers.get(TIMESTAMP_HEADER.lower()), headers.get(SIGNATURE_HEADER.lower())
        if not timestamp or not signature or not timestamp.strip().isdigit():
            return Refused(WebhookOutcome.UNSIGNED, f"{SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required")
        if abs(now.timestamp() - int(timestamp.strip())) > self.max_age_seconds:
            return Refused(WebhookOutcome.STALE, "the signature timestamp is too old or in the future")
        if not self.verifier.verify(timestamp, body, signature):
            return Refused(WebhookOutcome.BAD_SIGNATURE, "the signature does not verify")
        try:
            events = parse_batch(body)
        except MalformedEvent:
            return Refused(WebhookOutcome.MALFORMED, "the signed body is not a JSON array of events")
        return Verified(queued_bodies(events), received=len(events))


def queued_bodies(events: list[dict[str, Any]]) -> list[str]:
    """What the events queue holds for a verified batch: each delivery event, engagement left out.
    Test mode's simulated SendGrid queues its events in this shape (simulation.py)."""
    kept = [event for event in events if event.get("event") not in ENGAGEMENT]
    return [json.dumps(event, separators=(",", ":"), sort_keys=True) for event in kept]
