"""The `api` Lambda: API Gateway (HTTP API, IAM auth; payload format 1.0, the REST event shape).

A send (`POST /v1/messages`, nearly every request) is served here: its body checked by hand
(api/send_body.py, the documented model's rules), no request model and no OpenAPI validation
built, imported or run. Every other route is the Powertools router's (handlers/api_routes.py),
imported on the container's first such request. benchmarks/README.md has what each costs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache, partial
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import names
from sendledger.api import problems
from sendledger.api.problems import ProblemType, problem
from sendledger.api.responses import send_response, sms_refused_response
from sendledger.api.send_body import NO_BODY, FieldErrors, SendRequest, parse_send_body
from sendledger.domain import callers, errors, idempotency
from sendledger.domain.messages import Template
from sendledger.domain.recipients import Channel
from sendledger.handlers import request_gate
from sendledger.handlers.invocation import current_runtime, identity_arn
from sendledger.handlers.observability import lean_logger
from sendledger.usecases.results import Accepted, SmsRefused
from sendledger.usecases.send_command import SendCommand

logger = lean_logger()
metrics = Metrics()

SEND_PATH = "/v1/messages"
_SEND_PATH_METHODS = sorted(method for method, path in names.API_ROUTES if path == SEND_PATH)
IDEMPOTENCY_KEY = "Idempotency-Key"
_SCHEMA_MISMATCH = "the request does not match the schema"  # as the router answers its models' problems


def caller_of(event: Mapping[str, Any]) -> callers.Caller:
    """The application the request's identity signs for: every session of a role is the role."""
    return callers.caller_of(identity_arn(event), current_runtime().settings.caller_tenants)


def send(event: dict[str, Any], context: LambdaContext | None) -> Response[str]:
    """`POST /v1/messages`: the Idempotency-Key and the body checked, then the send use case."""
    key = _header(event, IDEMPOTENCY_KEY)
    found = _send_request(event.get("body"))
    mismatched = _key_problems(key) + (found if isinstance(found, list) else [])
    if mismatched or not isinstance(found, SendRequest):
        return problem(ProblemType.VALIDATION_ERROR, _SCHEMA_MISMATCH, mismatched)
    try:
        command = _command(found, key, caller_of(event).id)
        result = current_runtime().sender.send(command, partial(_seconds_left, context))
    except errors.DomainError as exc:
        return request_gate.domain_problem(exc, logger)
    if isinstance(result, SmsRefused):
        from sendledger.handlers.metrics_out import emit  # a refusal's path only
        from sendledger.ports.reports import sms_refused_metrics

        emit(metrics, sms_refused_metrics(result.refusal.reason))
        return sms_refused_response(result.refusal)
    # MessagesAccepted, MessagesUnknown, MessagesSuppressed, ... and replays apart.
    outcome = result.message.state.value.capitalize() if isinstance(result, Accepted) else "Replays"
    metrics.add_metric(name=f"Messages{outcome}", unit=MetricUnit.Count, value=1)
    return send_response(result)


def _seconds_left(context: LambdaContext | None) -> float:
    return context.get_remaining_time_in_millis() / 1000 if context else 30.0


def _key_problems(key: str | None) -> FieldErrors:
    """A bad key is a field error like any other; the use case parses the same value again."""
    try:
        idempotency.parse_key(key)
    except errors.InvalidRequest as exc:
        return [{"field": IDEMPOTENCY_KEY, "message": exc.detail}]
    return []


def _send_request(body: str | None) -> SendRequest | FieldErrors:
    parsed = json.loads(body) if body else None  # the gate refused what is not JSON
    found = NO_BODY if parsed is None else parse_send_body(parsed)
    if not isinstance(found, SendRequest) or found.escalation is None or found.channel is Channel.SMS:
        return found  # an SMS's escalation without a deadline takes its destination country's
    if found.escalation.deadline_seconds is None:
        message = "required for an email's escalation (an SMS's defaults to its country's)"
        return [{"field": "escalation.deadline_seconds", "message": message}]
    return found


def _header(event: Mapping[str, Any], name: str) -> str | None:
    """A header as the router reads one: the multi-value form when the event has it (repeats
    joined with commas), any letter case."""
    wanted = name.lower()
    for header, found in (event.get("multiValueHeaders") or event.get("headers") or {}).items():
        if header.lower() == wanted:
            return ",".join(found) if isinstance(found, list) else found
    return None


def _command(request: SendRequest, key: str | None, caller: callers.CallerId) -> SendCommand:
    esc = request.escalation
    if esc is not None and esc.deadline_seconds is None:  # an SMS's: its destination country's
        default_deadline = current_runtime().settings.sms_timing(request.to).escalation_deadline_seconds
    else:
        default_deadline = 0  # not used: the request's own deadline stands
    return SendCommand(
        channel=request.channel,
        to=request.to,
        template=Template(request.template_id, request.template_version),
        locale=request.locale,
        params=request.params,
        category=request.category,
        caller=caller,
        idempotency_header=key,
        event_id=request.event_id,
        escalation=esc.to_domain(default_deadline) if esc else None,
        provider=request.provider,
    )


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
    if event.get("httpMethod") == "POST" and event.get("path") == SEND_PATH:
        return request_gate.proxy_response(send(event, context))
    return dict(routes().app.resolve(event, context))


def allowed_methods(path: str) -> list[str]:
    if path == SEND_PATH:  # the send's path answers without the router
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
