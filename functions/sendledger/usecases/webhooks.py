"""A signed provider webhook POST: verified, queued, answered; applied later by the poller.

One design for every provider that pushes: the provider's intake verifies the POST and splits it
into its delivery events; a single-use token, when the provider signs one, is claimed by one
conditional write (the same POST again is a duplicate, the token with another body a replay);
each event is queued (SQS) and the poller's queue lane applies it with the one idempotent
routine. Nothing is applied here: the queue decouples the provider's retries from the ledger.
A queue fault answers 503 and releases the token, so the provider's retry gets in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from aws_lambda_powertools import Logger

from sendledger.domain.clock import Clock
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.values import value
from sendledger.ports.webhooks import EventSink, Refused, TokenClaim, WebhookIntake, WebhookOutcome, WebhookTokenStore

logger = Logger(child=True)


@value
class WebhookResult:
    outcome: WebhookOutcome
    received: int = 0
    queued: int = 0
    detail: str = ""


@dataclass
class Webhook:
    """One provider's webhook, as the route serves it."""

    source: str
    intake: WebhookIntake
    sink: EventSink | None  # None: not configured (every POST is refused)
    tokens: WebhookTokenStore
    clock: Clock


def receive_webhook(hook: Webhook, headers: Mapping[str, str], body: bytes) -> WebhookResult:
    now = hook.clock.now()
    lowered = {name.lower(): text for name, text in headers.items()}
    check = hook.intake.verify(lowered, body, now) if hook.sink is not None else None
    if check is None or isinstance(check, Refused):
        refused = check or Refused(WebhookOutcome.NOT_CONFIGURED, "no verification key or events queue is configured")
        logger.warning("webhook refused", extra={"source": hook.source, "outcome": refused.outcome.value})
        return WebhookResult(refused.outcome, detail=refused.detail)
    body_hash = hashlib.sha256(body).hexdigest()
    if check.token_hash is not None:
        expires = now + timedelta(seconds=check.replay_window_seconds)
        claim = hook.tokens.claim(hook.source, check.token_hash, body_hash, expires, now)
        if claim is TokenClaim.REPLAYED:
            logger.warning("webhook token replayed with another body", extra={"source": hook.source})
            return WebhookResult(WebhookOutcome.REPLAYED, detail="this signature was already used")
        if claim is TokenClaim.SAME_BODY:
            return WebhookResult(WebhookOutcome.DUPLICATE, received=check.received)
    assert hook.sink is not None
    try:
        hook.sink.put(check.bodies)
    except DependencyUnavailable:
        if check.token_hash is not None:
            hook.tokens.release(hook.source, check.token_hash, body_hash)  # the provider retries: let it in
        raise
    logger.info(
        "webhook queued", extra={"source": hook.source, "received": check.received, "queued": len(check.bodies)}
    )
    return WebhookResult(WebhookOutcome.QUEUED, received=check.received, queued=len(check.bodies))
