"""A signed Mailgun webhook POST, applied by the one idempotent routine (the faster path).

Order matters: the signature covers only timestamp + token, not the event, so the token is
claimed (one conditional write) before anything is applied; a refused or failed apply
releases it, so Mailgun's retry of the same webhook is not taken for a replay. Polling stays
the complete path: a webhook Mailgun never delivers (it does not retry `delivered`) is read
from the Events API anyway.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import MalformedEvent
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value
from sendledger.ports.webhooks import TokenClaim, WebhookTokenStore
from sendledger.providers.mailgun import SOURCE
from sendledger.providers.mailgun.events import parse_event
from sendledger.providers.mailgun.signature import SignatureCheck, check_signature, signature_block
from sendledger.usecases.ingest import IngestReport, Pipeline, ingest_event

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.settings import Settings

logger = Logger(child=True)


class WebhookOutcome(StrEnum):
    APPLIED = "applied"
    DUPLICATE = "duplicate"  # the same webhook again, or an event already applied
    IGNORED = "ignored"  # an event that proves nothing (opens, clicks)
    NOT_ENABLED = "not_enabled"  # no signing key configured
    UNSIGNED = "unsigned"  # signature missing or wrong
    STALE = "stale"  # timestamp outside MAILGUN_WEBHOOK_MAX_AGE_SECONDS
    REPLAYED = "replayed"  # a token already used, with another body
    MALFORMED = "malformed"  # signed, but not an event we can read


@value
class WebhookResult:
    outcome: WebhookOutcome
    detail: str = ""


@dataclass
class MailgunWebhook:
    tokens: WebhookTokenStore
    signing_key: Callable[[], str]
    max_age_seconds: int


def build_webhook(settings: Settings, ledger: LedgerTable) -> MailgunWebhook | None:
    """The replay guard and the signing key, when Mailgun webhooks are enabled (a signing key set)."""
    from sendledger.providers.mailgun.http import secret_value
    from sendledger.providers.mailgun.settings import MailgunSettings

    fragment = settings.provider(MailgunSettings)
    if not settings.carries(SOURCE, Channel.EMAIL) or not fragment.signing_key_secret_arn:
        return None
    return MailgunWebhook(
        ledger.webhook_tokens, secret_value(fragment.signing_key_secret_arn), fragment.webhook_max_age_seconds
    )


def receive_mailgun_webhook(pipeline: Pipeline, hook: MailgunWebhook | None, body: str) -> WebhookResult:
    services = pipeline.services
    if hook is None:
        return WebhookResult(WebhookOutcome.NOT_ENABLED, "Mailgun webhooks are not enabled")
    tokens, key = hook.tokens, hook.signing_key
    try:
        document = json.loads(body)
    except ValueError:
        return WebhookResult(WebhookOutcome.UNSIGNED, "no signature")
    block = signature_block(document) if isinstance(document, dict) else None
    now = services.clock.now()
    check = check_signature(block, key().encode(), now, hook.max_age_seconds)
    if check is not SignatureCheck.VALID or block is None:
        logger.warning("Mailgun webhook refused", extra={"check": check.value})
        if check is SignatureCheck.STALE:
            return WebhookResult(WebhookOutcome.STALE, "the signature's timestamp is too old or in the future")
        return WebhookResult(WebhookOutcome.UNSIGNED, "the signature does not verify")
    body_hash = hashlib.sha256(body.encode()).hexdigest()
    expires = now + timedelta(seconds=2 * hook.max_age_seconds)
    claim = tokens.claim(SOURCE, block.token_hash, body_hash, expires, now)
    if claim is TokenClaim.REPLAYED:
        logger.warning("Mailgun webhook token replayed with another body", extra={"token_sha256": block.token_hash})
        return WebhookResult(WebhookOutcome.REPLAYED, "this signature was already used")
    if claim is TokenClaim.SAME_BODY:
        return WebhookResult(WebhookOutcome.DUPLICATE)
    try:
        event = parse_event(document.get("event-data"))
        if event is None:
            return WebhookResult(WebhookOutcome.IGNORED)
        report = IngestReport()
        ingest_event(services, pipeline.events, event, report)
    except MalformedEvent as exc:
        tokens.release(SOURCE, block.token_hash, body_hash)
        return WebhookResult(WebhookOutcome.MALFORMED, str(exc))
    except DependencyUnavailable:
        tokens.release(SOURCE, block.token_hash, body_hash)  # Mailgun retries: let the retry in
        raise
    return WebhookResult(WebhookOutcome.DUPLICATE if report.duplicates else WebhookOutcome.APPLIED)
