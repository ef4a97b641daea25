"""The one entry of the API Gateway functions (the api, the webhooks), and what must never reach
their routers: unknown routes and methods; oversize, binary or non-JSON bodies.

Each answer is the same problem+json the router's own handlers give.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, Protocol, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap, names
from sendledger.api import problems
from sendledger.api.problems import JSON, ProblemType, problem
from sendledger.domain import errors
from sendledger.handlers import startup
from sendledger.handlers.invocation import RUNTIME
from sendledger.handlers.observability import traced

MAX_BODY_BYTES = 64 * 1024
# A template version's words may reach 100 KB of text and of HTML per locale (350 KB in all,
# one ledger item): its PUT may be that large, JSON escaping included.
TEMPLATE_MAX_BODY_BYTES = 1024 * 1024
# The largest body any provider's webhook takes (the largest batch a provider posts); each
# provider's intake refuses what is over its own limit (handlers/provider_routes.py).
WEBHOOK_MAX_BODY_BYTES = 1024 * 1024

AllowedMethods = Callable[[str], list[str]]  # a path → the methods its routes take (none: no route)
Refusal = Callable[[dict[str, Any]], "Response[str] | None"]  # a function's own answer before its router
Resolve = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]  # an event to API Gateway's proxy answer


class Handler(Protocol):
    """A Lambda entry; tests and the local stack pass their own runtime."""

    def __call__(
        self, event: dict[str, Any], context: LambdaContext, runtime: bootstrap.Runtime | None = None
    ) -> dict[str, Any]: ...


def serve(
    resolve: Resolve,
    *,
    allowed_methods: AllowedMethods,
    logger: Logger,
    metrics: Metrics,
    counted_as: str,
    refusal: Refusal | None = None,
) -> Handler:
    """An API Gateway function's Lambda entry over `resolve` (a router's, or one that picks among
    routes): the logger's context (the request's correlation id, cleared between requests), EMF
    metrics with the cold start and one `counted_as` per request, tracing (opt-in) without the
    answer, which holds addresses, histories or a provider's recipients; the invocation's runtime
    for the routes; what must never reach the routes (then `refusal`) answered before them; HEAD
    served as the GET without its body."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    @metrics.log_metrics(capture_cold_start_metric=True)
    @traced(capture_response=False)
    def lambda_handler(
        event: dict[str, Any], context: LambdaContext, runtime: bootstrap.Runtime | None = None
    ) -> dict[str, Any]:
        metrics.add_metric(name=counted_as, unit=MetricUnit.Count, value=1)
        token = RUNTIME.set(runtime)
        try:
            early = precheck(event, allowed_methods) or (refusal(event) if refusal else None)
            if early is not None:
                return proxy_response(early)
            if event.get("httpMethod") == "HEAD":
                return head_answer(resolve(as_get(event), context))
            return resolve(event, context)
        finally:
            RUNTIME.reset(token)

    # outermost: the first invocation's return ends the start
    return cast(Handler, startup.ends_startup(lambda_handler))  # Powertools' decorators are untyped


def allowed_methods_of(app: APIGatewayRestResolver) -> AllowedMethods:
    """The methods `app`'s routes take at a path (none: no route)."""

    def allowed(path: str) -> list[str]:
        # Powertools has no public route table; a test checks every route against its OpenAPI path.
        # A fixed path wins over a pattern that would also match it (/v1/password-resets/consume).
        static = {route.method for route in app._static_routes if route.rule.match(path)}
        return sorted(static or {route.method for route in app._dynamic_routes if route.rule.match(path)})

    return allowed


def answer_problems(app: APIGatewayRestResolver, logger: Logger) -> None:
    """Domain errors and unknown routes as the same problem+json from every function's router."""

    @app.exception_handler(errors.DomainError)
    def on_domain_error(exc: errors.DomainError) -> Response[str]:
        return domain_problem(exc, logger)

    @app.not_found
    def on_not_found(_: Exception) -> Response[str]:
        return problem(ProblemType.NOT_FOUND, "no such route")


def domain_problem(exc: errors.DomainError, logger: Logger) -> Response[str]:
    """A use case's error as its problem; a dependency's fault is logged too."""
    if isinstance(exc, errors.DependencyUnavailable):
        logger.warning("dependency unavailable", extra={"detail": exc.detail})
    return problems.for_domain_error(exc)


def proxy_response(answer: Response[str]) -> dict[str, Any]:
    """An answer given before the router, in API Gateway's proxy shape."""
    return {
        "statusCode": answer.status_code,
        "multiValueHeaders": {name: [value] for name, value in answer.headers.items()},
        "body": answer.body,
        "isBase64Encoded": False,
    }


def with_head(methods: list[str]) -> list[str]:
    """HEAD is GET without the body (RFC 9110): every GET route takes it."""
    return sorted({*methods, "HEAD"}) if "GET" in methods else methods


def as_get(event: dict[str, Any]) -> dict[str, Any]:
    """A HEAD request's event as the GET the router serves (the answer's body is dropped after)."""
    context = {**(event.get("requestContext") or {}), "httpMethod": "GET"}
    return {**event, "httpMethod": "GET", "requestContext": context}


def head_answer(get_answer: dict[str, Any]) -> dict[str, Any]:
    """The GET's answer without its body, with the Content-Length the body would have had."""
    body = get_answer.get("body") or ""
    length = len(base64.b64decode(body)) if get_answer.get("isBase64Encoded") else len(body.encode("utf-8"))
    headers = {**(get_answer.get("multiValueHeaders") or {}), "Content-Length": [str(length)]}
    return {**get_answer, "multiValueHeaders": headers, "body": "", "isBase64Encoded": False}


def _route_problem(event: dict[str, Any], allowed_methods: AllowedMethods) -> Response[str] | None:
    """404 for an unknown path, 405 with Allow for a method the path does not take.

    Methods are case-sensitive (RFC 9110); Powertools would upper-case them, so `post` would
    skip the body checks below, and an event without a method or path would crash it.
    """
    method, path = event.get("httpMethod"), event.get("path")
    allowed = with_head(allowed_methods(path)) if isinstance(path, str) else []
    if not allowed:
        return problem(ProblemType.NOT_FOUND, "no such route")
    if method not in allowed:
        allow = ", ".join(allowed)
        return problem(ProblemType.METHOD_NOT_ALLOWED, f"this route answers {allow}", headers={"Allow": allow})
    return None


def precheck(event: dict[str, Any], allowed_methods: AllowedMethods) -> Response[str] | None:
    """Reject what must never reach the router: bad routes or methods; oversize, binary or non-JSON bodies."""
    routed = _route_problem(event, allowed_methods)
    if routed is not None:
        return routed
    body = event.get("body") or ""
    path = str(event.get("path"))
    limit = MAX_BODY_BYTES
    if path.startswith(names.PROVIDERS_PATH):
        limit = WEBHOOK_MAX_BODY_BYTES
    elif path.startswith(names.TEMPLATES_PATH) and event.get("httpMethod") == "PUT":
        limit = TEMPLATE_MAX_BODY_BYTES
    if len(body.encode("utf-8", errors="surrogatepass")) > limit * (4 / 3 if event.get("isBase64Encoded") else 1):
        return problem(ProblemType.PAYLOAD_TOO_LARGE, f"bodies are limited to {limit} bytes")
    if event.get("httpMethod") not in ("POST", "PUT") or not body:
        return None
    if event.get("isBase64Encoded"):
        return problem(ProblemType.INVALID_REQUEST, "binary bodies are not accepted")
    if _media_type(event) != JSON:
        return problem(ProblemType.UNSUPPORTED_MEDIA_TYPE, "send application/json")
    try:
        json.loads(body)  # the parser's own limits (depth, huge integers) must be a 400, not a crash
    except (ValueError, RecursionError):
        return problem(ProblemType.INVALID_REQUEST, "the body is not valid JSON")
    return None


def _media_type(event: dict[str, Any]) -> str:
    """The request's media type, lower-cased; the header is normalised for the router too."""
    media_type = ""
    for key in ("headers", "multiValueHeaders"):
        headers = event.get(key) or {}
        for name in list(headers):
            if name.lower() == "content-type":
                value = (headers[name] or [None])[0] if key == "multiValueHeaders" else headers[name]
                media_type = (value or "").split(";")[0].strip().lower()
                headers[name] = [media_type] if key == "multiValueHeaders" else media_type
    return media_type
