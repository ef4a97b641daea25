"""The providers' signed webhook route, served by the webhooks Lambda (handlers/webhooks.py), never
by the api: no IAM, the provider's signature is the auth.

One route for every provider that pushes (`POST /v1/providers/{provider}/events`): the provider's
intake verifies the POST, its events are queued for the poller (usecases/webhooks.py). Deployed,
each provider's route has a function of its own whose role writes that provider's queue alone
(infra/webhooks.py).
"""

from __future__ import annotations

import json

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from sendledger import bootstrap, names
from sendledger.api.models import WebhookReceipt
from sendledger.api.openapi import documented
from sendledger.api.problems import JSON, ProblemType, problem
from sendledger.domain.errors import echo
from sendledger.handlers.invocation import RUNTIME

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves Router.__init__ unannotated


@router.post(
    names.PROVIDER_EVENTS_ROUTE.replace("{provider}", "<provider>"),
    responses=documented(200, WebhookReceipt, 400, 403, 404, 413, 415, 503),
    description="A provider's signed webhook (no IAM: the provider's own signature authenticates it); "
    "the delivery events it carries are queued for the poller",
)
def post_provider_events(provider: str) -> Response[str]:
    from sendledger.ports.webhooks import WebhookOutcome
    from sendledger.usecases.webhooks import receive_webhook

    runtime = RUNTIME.get()  # tests and the local stack pass theirs; deployed, the container's own
    hook = runtime.webhook(provider) if runtime is not None else bootstrap.webhook(provider)
    if hook is None:
        return problem(ProblemType.NOT_FOUND, f"no webhook of {echo(provider)} is enabled here")
    event = router.current_event
    body = (event.body or "").encode("utf-8", errors="surrogatepass")
    if len(body) > hook.intake.max_body_bytes:
        return problem(
            ProblemType.PAYLOAD_TOO_LARGE, f"this provider's bodies are limited to {hook.intake.max_body_bytes} bytes"
        )
    result = receive_webhook(hook, dict(event.headers or {}), body)
    if result.outcome in (WebhookOutcome.QUEUED, WebhookOutcome.DUPLICATE):
        answer = {
            "received": result.received,
            "queued": result.queued,
            "duplicate": result.outcome is WebhookOutcome.DUPLICATE,
        }
        return Response(status_code=200, content_type=JSON, body=json.dumps(answer))
    if result.outcome is WebhookOutcome.MALFORMED:
        return problem(ProblemType.INVALID_REQUEST, result.detail)
    refusals = {
        WebhookOutcome.REPLAYED: ProblemType.WEBHOOK_REPLAYED,
        WebhookOutcome.STALE: ProblemType.WEBHOOK_SIGNATURE_STALE,
    }
    # unsigned, bad, unverifiable (no key configured): one meaning, whichever provider posted
    return problem(refusals.get(result.outcome, ProblemType.WEBHOOK_SIGNATURE_INVALID), result.detail)
