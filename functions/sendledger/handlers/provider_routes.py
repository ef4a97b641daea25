"""The providers' signed webhook routes of the api Lambda: no IAM, the signature is the auth.

Each route's verification and ingestion code is imported inside it, so a container that serves
the callers' API never loads it at cold start.
"""

from __future__ import annotations

import json

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from sendledger import names
from sendledger.api.mailgun_models import WebhookAccepted
from sendledger.api.models import WebhookReceipt
from sendledger.api.openapi import documented
from sendledger.api.problems import JSON, ProblemType, problem
from sendledger.handlers.invocation import current_runtime

# A SendGrid webhook batch is posted at 768 KB at most; over this limit it is refused (413).
WEBHOOK_MAX_BODY_BYTES = 1024 * 1024
BODY_LIMITS = {names.SENDGRID_EVENTS_PATH: WEBHOOK_MAX_BODY_BYTES}

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves Router.__init__ unannotated


@router.post(
    names.MAILGUN_EVENTS_PATH,
    responses=documented(200, WebhookAccepted, 400, 403, 404, 413, 415, 503),
    description="Mailgun's signed webhooks; no IAM: the body's HMAC signature authenticates it",
)
def post_mailgun_events() -> Response[str]:
    from sendledger.usecases.mailgun_webhook import WebhookOutcome, receive_mailgun_webhook

    result = receive_mailgun_webhook(current_runtime().pipeline, router.current_event.body or "")
    if result.outcome in {WebhookOutcome.APPLIED, WebhookOutcome.DUPLICATE, WebhookOutcome.IGNORED}:
        return Response(status_code=200, content_type=JSON, body=json.dumps({"status": result.outcome.value}))
    refused = {
        WebhookOutcome.UNSIGNED: ProblemType.WEBHOOK_SIGNATURE_INVALID,
        WebhookOutcome.STALE: ProblemType.WEBHOOK_SIGNATURE_STALE,
        WebhookOutcome.REPLAYED: ProblemType.WEBHOOK_REPLAYED,
    }
    if result.outcome in refused:
        return problem(refused[result.outcome], result.detail)
    if result.outcome is WebhookOutcome.NOT_ENABLED:
        return problem(ProblemType.NOT_FOUND, result.detail)
    return problem(ProblemType.INVALID_REQUEST, f"not a Mailgun event: {result.detail}")


@router.post(names.SENDGRID_EVENTS_PATH, responses=documented(200, WebhookReceipt, 400, 403, 413, 415, 503))
def post_sendgrid_events() -> Response[str]:
    """SendGrid's Signed Event Webhook: verified over the raw body, then queued (no IAM: the signature is the auth)."""
    from sendledger.domain.sendgrid_events import SIGNATURE_HEADER, TIMESTAMP_HEADER
    from sendledger.usecases.provider_webhooks import WebhookOutcome, accept_sendgrid_events

    event = router.current_event
    result = accept_sendgrid_events(
        current_runtime().sendgrid_webhook,
        event.headers.get(TIMESTAMP_HEADER),
        event.headers.get(SIGNATURE_HEADER),
        (event.body or "").encode("utf-8", errors="surrogatepass"),
    )
    if result.outcome is WebhookOutcome.QUEUED:
        body = json.dumps({"received": result.received, "queued": result.queued})
        return Response(status_code=200, content_type=JSON, body=body)
    if result.outcome is WebhookOutcome.MALFORMED:
        return problem(ProblemType.INVALID_REQUEST, "the signed body is not a JSON array of events")
    refusals = {
        WebhookOutcome.NOT_CONFIGURED: (
            ProblemType.WEBHOOK_SIGNATURE_INVALID,
            "no verification key is configured for SendGrid events",
        ),
        WebhookOutcome.UNSIGNED: (
            ProblemType.WEBHOOK_SIGNATURE_INVALID,
            f"{SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required",
        ),
        WebhookOutcome.STALE: (
            ProblemType.WEBHOOK_SIGNATURE_STALE,
            "the signature timestamp is too old or in the future",
        ),
        WebhookOutcome.BAD_SIGNATURE: (ProblemType.WEBHOOK_SIGNATURE_INVALID, "the signature does not verify"),
    }
    kind, detail = refusals[result.outcome]
    return problem(kind, detail)
