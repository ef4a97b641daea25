"""Signed provider webhooks: verify, then queue each delivery event for the one ingestion routine.

Nothing is applied here: the events queue decouples the provider's retries from the ledger, and
the poller applies each event once (dedupe by the provider's event id), as for SES.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.clock import Clock
from sendledger.domain.events import MalformedEvent
from sendledger.domain.values import value
from sendledger.ports.webhooks import EventSink, WebhookVerifier
from sendledger.providers.sendgrid.events import ENGAGEMENT, parse_batch

if TYPE_CHECKING:
    from sendledger.usecases.context import Services

logger = Logger(child=True)


class WebhookOutcome(StrEnum):
    QUEUED = "queued"
    NOT_CONFIGURED = "not_configured"  # no verification key: nothing can be trusted
    UNSIGNED = "unsigned"  # a signature or timestamp header is missing or unreadable
    STALE = "stale"  # signed too long ago (or in the future): a replay
    BAD_SIGNATURE = "bad_signature"
    MALFORMED = "malformed"  # signed, but not a JSON array of events


@value
class WebhookResult:
    outcome: WebhookOutcome
    received: int = 0
    queued: int = 0


@dataclass
class SendGridWebhook:
    verifier: WebhookVerifier | None
    sink: EventSink | None
    clock: Clock
    max_age_seconds: int


def build_webhook(services: Services) -> SendGridWebhook:
    """Verifier and queue of the signed Event Webhook; unconfigured, every POST is refused."""
    from sendledger.adapters.secrets import provider_secret
    from sendledger.adapters.sqs_sink import SqsEventSink
    from sendledger.providers.sendgrid.settings import SendGridSettings
    from sendledger.providers.sendgrid.signature import SendGridSignatureVerifier

    fragment = services.settings.provider(SendGridSettings)
    key_secret, queue_url = fragment.webhook_key_secret_arn, fragment.events_queue_url
    return SendGridWebhook(
        verifier=SendGridSignatureVerifier(lambda: provider_secret(key_secret)) if key_secret else None,
        sink=SqsEventSink(queue_url) if queue_url else None,
        clock=services.clock,
        max_age_seconds=fragment.webhook_max_age_seconds,
    )


def accept_sendgrid_events(
    hook: SendGridWebhook, timestamp: str | None, signature: str | None, body: bytes
) -> WebhookResult:
    if hook.verifier is None or hook.sink is None:
        return _refused(WebhookOutcome.NOT_CONFIGURED)
    if not timestamp or not signature or not timestamp.strip().isdigit():
        return _refused(WebhookOutcome.UNSIGNED)
    age = hook.clock.now().timestamp() - int(timestamp.strip())
    if abs(age) > hook.max_age_seconds:
        return _refused(WebhookOutcome.STALE, age_seconds=round(age))
    if not hook.verifier.verify(timestamp, body, signature):
        return _refused(WebhookOutcome.BAD_SIGNATURE)
    try:
        events = parse_batch(body)
    except MalformedEvent:
        return _refused(WebhookOutcome.MALFORMED)
    # Engagement events prove nothing about delivery; anything else, even unreadable, is queued
    # (an unreadable one ends in the dead-letter queue, kept as evidence).
    kept = [event for event in events if event.get("event") not in ENGAGEMENT]
    hook.sink.put([json.dumps(event, separators=(",", ":"), sort_keys=True) for event in kept])
    logger.info("sendgrid webhook queued", extra={"received": len(events), "queued": len(kept)})
    return WebhookResult(WebhookOutcome.QUEUED, received=len(events), queued=len(kept))


def _refused(outcome: WebhookOutcome, **extra: object) -> WebhookResult:
    logger.warning("sendgrid webhook refused", extra={"outcome": outcome.value, **extra})
    return WebhookResult(outcome)
