"""The `webhooks` Lambda: a provider's signed webhook POST (no IAM) → verify, claim, queue.

Apart from the api on purpose: this is the one route anyone on the internet can reach without
SigV4, so it runs under a role that may only read its provider's signing key, claim that
provider's replay tokens and write that provider's events queue (infra/webhooks.py). A fault in a
webhook parser reaches neither the ledger's other items nor any other queue.
"""

from __future__ import annotations

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from sendledger.handlers import provider_routes, request_gate
from sendledger.handlers.observability import lean_logger

logger = lean_logger()
metrics = Metrics()
app = APIGatewayRestResolver(enable_validation=True)
app.include_router(provider_routes.router)
request_gate.answer_problems(app, logger)
# A provider's events name recipients: its answer never goes into X-Ray either.
lambda_handler = request_gate.serve(
    app.resolve,
    allowed_methods=request_gate.allowed_methods_of(app),
    logger=logger,
    metrics=metrics,
    counted_as="WebhookRequests",
)
