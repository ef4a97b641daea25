"""The api's success bodies as HTTP responses: JSON, and the headers a message view carries."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response

from sendledger.api.problems import JSON, ProblemType, problem
from sendledger.domain.clock import iso
from sendledger.domain.sms_guardrails import CountryRefusal, RuleSource, SmsRefusal
from sendledger.usecases.results import Accepted, Replayed, SuppressionStatus


def json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response[str]:
    return Response(status_code=status, content_type=JSON, body=json.dumps(body), headers=headers or {})


def message_response(status: int, view: dict[str, Any], replayed: bool = False) -> Response[str]:
    """Pending and unknown messages tell the caller when to look again (also in a replay)."""
    headers: dict[str, str] = {}
    wait = view.get("retry_after_seconds")
    if isinstance(wait, int):
        headers["Retry-After"] = str(wait)
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return json_response(status, view, headers)


def send_response(result: Accepted | Replayed) -> Response[str]:
    return message_response(202, result.view, replayed=isinstance(result, Replayed))


def suppression_response(status: SuppressionStatus, *, admin: bool) -> Response[str]:
    """The caller's view (state, class, since, version, its own entries) or the admin's (the
    reason as written and the whole history, actors included)."""
    state = status.state
    view: dict[str, object] = {
        "recipient": status.recipient,
        "suppressed": state.suppressed,
        "reason_class": status.reason_class,
        "since": iso(state.since) if state.since else None,
        "version": state.version,
    }
    if admin:
        view["reason"] = state.reason
    view["history"] = status.history
    return json_response(200, view)


def sms_refused_response(refusal: SmsRefusal) -> Response[str]:
    """422 for a country the owner's rule refuses, 429 until the next UTC day for a reached cap."""
    if isinstance(refusal, CountryRefusal):
        whose = "your" if refusal.source is RuleSource.CALLER else "this deployment's default"
        detail = f"SMS to {refusal.country} numbers are refused by {whose} rule ({refusal.rule.describe()})"
        errors = [{"field": "to", "message": f"country {refusal.country} not allowed"}]
        return problem(ProblemType.SMS_COUNTRY_NOT_ALLOWED, detail, errors)
    detail = f"your daily SMS cap of {refusal.cap} segments is reached ({refusal.counted} counted today, UTC)"
    return problem(ProblemType.SMS_CAP_REACHED, detail, retry_after=refusal.retry_after_seconds)
