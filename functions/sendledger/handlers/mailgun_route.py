"""HTTP answers for Mailgun's webhook route (the api handler's choice of codes, kept apart)."""

from __future__ import annotations

import json

from aws_lambda_powertools.event_handler import Response

from sendledger.api.problems import problem
from sendledger.usecases.mailgun_webhook import WebhookOutcome, WebhookResult

JSON = "application/json"
_ACCEPTED = {WebhookOutcome.APPLIED, WebhookOutcome.DUPLICATE, WebhookOutcome.IGNORED}
_REFUSED = {
    WebhookOutcome.UNSIGNED: "webhook-signature-invalid",
    WebhookOutcome.STALE: "webhook-signature-stale",
    WebhookOutcome.REPLAYED: "webhook-replayed",
}


def webhook_response(result: WebhookResult) -> Response[str]:
    if result.outcome in _ACCEPTED:
        return Response(status_code=200, content_type=JSON, body=json.dumps({"status": result.outcome.value}))
    if result.outcome in _REFUSED:
        return problem(403, _REFUSED[result.outcome], result.detail)
    if result.outcome is WebhookOutcome.NOT_ENABLED:
        return problem(404, "not-found", result.detail)
    return problem(400, "invalid-request", f"not a Mailgun event: {result.detail}")
