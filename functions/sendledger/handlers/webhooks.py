"""The `webhooks` Lambda: a provider's signed webhook POST (no IAM) → verify, claim, queue.

Apart from the api on purpose: this is the one route anyone on the internet can reach without
SigV4, so it runs under a role that may only read its provider's signing key, claim that
provider's replay tokens and write that provider's events queue (infra/webhooks.py). A fault in a
webhook parser reaches neither the ledger's other items nor any other queue.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.handlers import provider_routes, request_gate, startup
from sendledger.handlers.invocation import RUNTIME
from sendledger.handlers.observability import lean_logger, traced

logger = lean_logger()
metrics = Metrics()
app = APIGatewayRestResolver(enable_validation=True)
app.include_router(provider_routes.router)
request_gate.answer_problems(app, logger)
_allowed_methods = request_gate.allowed_methods_of(app)


@startup.ends_startup  # outermost: the first invocation's return ends the start
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
@traced(capture_response=False)  # a provider's events name recipients: never into X-Ray
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.Runtime | None = None
) -> dict[str, Any]:
    metrics.add_metric(name="WebhookRequests", unit=MetricUnit.Count, value=1)
    token = RUNTIME.set(runtime)
    try:
        early = request_gate.precheck(event, _allowed_methods)
        if early is not None:
            return request_gate.proxy_response(early)
        return app.resolve(event, context)
    finally:
        RUNTIME.reset(token)
