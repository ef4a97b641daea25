"""RFC 9457 problem documents: one builder, used by every error path."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response

from sendledger.domain import errors as domain

JSON = "application/json"  # what the API takes and answers
PROBLEM_JSON = "application/problem+json"  # what it answers on an error
TYPE_BASE = "https://sendledger.dev/problems/"


def problem(
    status: int,
    slug: str,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    retry_after: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response[str]:
    body: dict[str, Any] = {
        "type": TYPE_BASE + slug,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    headers = dict(headers or {})
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return Response(status_code=status, content_type=PROBLEM_JSON, body=json.dumps(body), headers=headers or None)


LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


def validation_errors(raw_errors: Any) -> list[dict[str, Any]]:
    """Pydantic/Powertools errors as `{field, message}` without echoing input values.

    A field is named as the caller sent it: no location prefix, headers in their usual spelling.
    """
    errors = []
    for error in raw_errors:
        location = [str(part) for part in error.get("loc", ())]
        where = location.pop(0) if location and location[0] in LOCATIONS else "body"
        if where == "header" and location:
            location[0] = "-".join(word.capitalize() for word in location[0].split("-"))
        errors.append({"field": ".".join(location) or "body", "message": str(error.get("msg", "invalid"))})
    return errors


# Status and problem type of each domain error; the two that tell the caller when to retry are
# handled first (their Retry-After comes from the error).
_STATUS_OF: dict[type[domain.DomainError], tuple[int, str]] = {
    domain.IdempotencyKeyMissing: (400, "idempotency-key-missing"),
    domain.IdempotencyKeyReused: (422, "idempotency-key-reused"),
    domain.UnknownTemplate: (422, "unknown-template"),
    domain.InvalidRequest: (400, "invalid-request"),
    domain.UnknownCaller: (403, "unknown-caller"),
    domain.NotAdmin: (403, "not-admin"),
}


def for_domain_error(exc: domain.DomainError) -> Response[str]:
    """The one place a use case's error becomes an HTTP status."""
    field_errors = exc.errors
    if isinstance(exc, domain.IdempotencyKeyMissing) and not field_errors:
        field_errors = [{"field": "Idempotency-Key", "message": "required unless the body has event_id"}]
    if isinstance(exc, domain.IdempotencyKeyInFlight):
        status, slug, retry_after = 409, "idempotency-key-in-flight", exc.retry_after_seconds
    elif isinstance(exc, domain.DependencyUnavailable):
        status, slug, retry_after = 503, "dependency-unavailable", exc.retry_after_seconds
    else:
        (status, slug), retry_after = _STATUS_OF.get(type(exc), (400, "invalid-request")), None
    return problem(status, slug, exc.detail, field_errors or None, retry_after)
