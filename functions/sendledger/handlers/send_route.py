"""`POST /v1/messages` without the router: the Idempotency-Key and the body checked by hand
(api/send_body.py, the documented model's rules), then the send use case. The api's entry
(handlers/api.py) answers every send with it; the router's documented route (handlers/api_routes.py)
answers with it too, so both give the same answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger.api.problems import schema_mismatch
from sendledger.api.responses import send_response, sms_refused_response
from sendledger.api.send_body import NO_BODY, FieldErrors, SendRequest, parse_send_body
from sendledger.domain import callers, errors, idempotency
from sendledger.domain.messages import Template
from sendledger.domain.recipients import Channel
from sendledger.handlers import request_gate
from sendledger.handlers.invocation import caller_of, current_runtime
from sendledger.usecases.results import Accepted, SmsRefused
from sendledger.usecases.send_command import SendCommand

logger = Logger(child=True)
metrics = Metrics()  # Powertools' metrics are one set per process: the entry's decorator flushes them

SEND_PATH = "/v1/messages"


def send(event: dict[str, Any], context: LambdaContext | None) -> Response[str]:
    """`POST /v1/messages`: the Idempotency-Key and the body checked, then the send use case."""
    key = _header(event, idempotency.HEADER)
    found = _send_request(event.get("body"))
    mismatched = _key_problems(key) + (found if isinstance(found, list) else [])
    if mismatched or not isinstance(found, SendRequest):
        return schema_mismatch(mismatched)
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
        return [{"field": idempotency.HEADER, "message": exc.detail}]
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
