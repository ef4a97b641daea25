"""The `api` Lambda's entry: API Gateway (HTTP API, IAM auth; payload format 1.0, the REST event shape).

A send (`POST /v1/messages`, nearly every request) is answered by handlers/send_route.py: its body
checked by hand (api/send_body.py, the documented model's rules), no request model and no OpenAPI
validation built, imported or run. Every other route is the Powertools router's
(handlers/api_routes.py), imported on the container's first such request. benchmarks/README.md has
what each costs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import names
from sendledger.api import problems
from sendledger.domain import callers, errors
from sendledger.handlers import request_gate, send_route
from sendledger.handlers.invocation import caller_of, current_runtime
from sendledger.handlers.observability import lean_logger

logger = lean_logger()
metrics = Metrics()

_SEND_PATH_METHODS = sorted(method for method, path in names.API_ROUTES if path == send_route.SEND_PATH)


def admin_refusal(event: dict[str, Any]) -> Response[str] | None:
    """/v1/admin/* only for the principals the settings name (the second check: the gateway let the
    request through on the admin invoke policy's route grant); anyone else: 403, logged and counted."""
    if not str(event.get("path", "")).startswith(names.ADMIN_PATH_PREFIX):
        return None
    try:
        caller = caller_of(event)
    except errors.DomainError as exc:
        return problems.for_domain_error(exc)
    if callers.is_admin(caller, current_runtime().settings.admin_principals):
        return None
    logger.warning("admin route refused", extra={"principal": caller.principal.arn, "path": event.get("path")})
    metrics.add_metric(name="AdminRefused", unit=MetricUnit.Count, value=1)
    refused = errors.NotAdmin(f"{caller.principal.arn} is not one of this deployment's admin principals")
    return problems.for_domain_error(refused)


@cache
def routes() -> Any:
    """Every route but the send: the router, its models and its validation, built once."""
    from sendledger.handlers import api_routes

    return api_routes


def resolve(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("httpMethod") == "POST" and event.get("path") == send_route.SEND_PATH:
        return request_gate.proxy_response(send_route.send(event, context))
    return dict(routes().app.resolve(event, context))


def allowed_methods(path: str) -> list[str]:
    if path == send_route.SEND_PATH:  # the send's path answers without the router
        return _SEND_PATH_METHODS
    return request_gate.allowed_methods_of(routes().app)(path)


lambda_handler = request_gate.serve(
    resolve,
    allowed_methods=allowed_methods,
    logger=logger,
    metrics=metrics,
    counted_as="ApiRequests",
    refusal=admin_refusal,
)
