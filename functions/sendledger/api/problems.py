"""RFC 9457 problem documents: one builder, used by every error path."""

from __future__ import annotations

import json
from enum import StrEnum
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response

from sendledger.domain import errors as domain
from sendledger.domain import idempotency

JSON = "application/json"  # what the API takes and answers
PROBLEM_JSON = "application/problem+json"  # what it answers on an error
TYPE_BASE = "https://sendledger.dev/problems/"


class ProblemType(StrEnum):
    """Every problem type the API and the local gateway answer with, one per meaning.

    A document's `type` is TYPE_BASE + the value; each type has one status (STATUS).
    docs/api.md lists them, and a test checks that list against this one.
    """

    VALIDATION_ERROR = "validation-error"
    INVALID_REQUEST = "invalid-request"
    IDEMPOTENCY_KEY_MISSING = "idempotency-key-missing"
    IDEMPOTENCY_KEY_REUSED = "idempotency-key-reused"
    IDEMPOTENCY_KEY_IN_FLIGHT = "idempotency-key-in-flight"
    UNKNOWN_TEMPLATE = "unknown-template"
    TEMPLATE_INTERNAL = "template-internal"
    TEMPLATE_CHANNEL_UNSUPPORTED = "template-channel-unsupported"
    TEMPLATE_PARAMS_INVALID = "template-params-invalid"
    TEMPLATE_RETIRED = "template-retired"
    TEMPLATE_INVALID = "template-invalid"
    TEMPLATE_VERSION_EXISTS = "template-version-exists"
    SMS_COUNTRY_NOT_ALLOWED = "sms-country-not-allowed"
    SMS_CAP_REACHED = "sms-cap-reached"
    UNKNOWN_CALLER = "unknown-caller"
    NOT_ADMIN = "not-admin"
    INVALID_TOKEN = "invalid-token"  # noqa: S105  (a problem type, not a secret)
    NOT_FOUND = "not-found"
    METHOD_NOT_ALLOWED = "method-not-allowed"
    PAYLOAD_TOO_LARGE = "payload-too-large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"
    WEBHOOK_SIGNATURE_INVALID = "webhook-signature-invalid"
    WEBHOOK_SIGNATURE_STALE = "webhook-signature-stale"
    WEBHOOK_REPLAYED = "webhook-replayed"
    ROTATION_TOO_RECENT = "rotation-too-recent"
    DEPENDENCY_UNAVAILABLE = "dependency-unavailable"
    # Answered by the local gateway itself (deployed, API Gateway answers these: see docs/api.md).
    NOT_AUTHORIZED = "not-authorized"
    LENGTH_REQUIRED = "length-required"
    URI_TOO_LONG = "uri-too-long"
    HEADERS_TOO_LARGE = "headers-too-large"


STATUS: dict[ProblemType, int] = {
    ProblemType.VALIDATION_ERROR: 400,
    ProblemType.INVALID_REQUEST: 400,
    ProblemType.IDEMPOTENCY_KEY_MISSING: 400,
    ProblemType.IDEMPOTENCY_KEY_REUSED: 422,
    ProblemType.IDEMPOTENCY_KEY_IN_FLIGHT: 409,
    ProblemType.UNKNOWN_TEMPLATE: 422,
    ProblemType.TEMPLATE_INTERNAL: 422,
    ProblemType.TEMPLATE_CHANNEL_UNSUPPORTED: 422,
    ProblemType.TEMPLATE_PARAMS_INVALID: 422,
    ProblemType.TEMPLATE_RETIRED: 422,
    ProblemType.TEMPLATE_INVALID: 422,
    ProblemType.TEMPLATE_VERSION_EXISTS: 409,
    ProblemType.SMS_COUNTRY_NOT_ALLOWED: 422,
    ProblemType.SMS_CAP_REACHED: 429,
    ProblemType.UNKNOWN_CALLER: 403,
    ProblemType.NOT_ADMIN: 403,
    ProblemType.INVALID_TOKEN: 400,
    ProblemType.NOT_FOUND: 404,
    ProblemType.METHOD_NOT_ALLOWED: 405,
    ProblemType.PAYLOAD_TOO_LARGE: 413,
    ProblemType.UNSUPPORTED_MEDIA_TYPE: 415,
    ProblemType.WEBHOOK_SIGNATURE_INVALID: 403,
    ProblemType.WEBHOOK_SIGNATURE_STALE: 403,
    ProblemType.WEBHOOK_REPLAYED: 403,
    ProblemType.ROTATION_TOO_RECENT: 409,
    ProblemType.DEPENDENCY_UNAVAILABLE: 503,
    ProblemType.NOT_AUTHORIZED: 403,
    ProblemType.LENGTH_REQUIRED: 411,
    ProblemType.URI_TOO_LONG: 414,
    ProblemType.HEADERS_TOO_LARGE: 431,
}


def problem_body(kind: ProblemType, detail: str, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    status = STATUS[kind]
    body: dict[str, Any] = {"type": TYPE_BASE + kind, "title": HTTPStatus(status).phrase, "status": status}
    body["detail"] = detail
    if errors:
        body["errors"] = errors
    return body


def problem(
    kind: ProblemType,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    retry_after: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response[str]:
    body = problem_body(kind, detail, errors)
    headers = dict(headers or {})
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return Response(
        status_code=body["status"], content_type=PROBLEM_JSON, body=json.dumps(body), headers=headers or None
    )


def schema_mismatch(field_errors: list[dict[str, Any]]) -> Response[str]:
    """400: the request's fields do not match the documented schema (the router's models, or the
    send route's hand check of the same rules), each problem named by its field."""
    return problem(ProblemType.VALIDATION_ERROR, "the request does not match the schema", field_errors)


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


# The problem type of each domain error; the two that tell the caller when to retry carry their
# Retry-After from the error.
_TYPE_OF: dict[type[domain.DomainError], ProblemType] = {
    domain.IdempotencyKeyMissing: ProblemType.IDEMPOTENCY_KEY_MISSING,
    domain.IdempotencyKeyReused: ProblemType.IDEMPOTENCY_KEY_REUSED,
    domain.IdempotencyKeyInFlight: ProblemType.IDEMPOTENCY_KEY_IN_FLIGHT,
    domain.UnknownTemplate: ProblemType.UNKNOWN_TEMPLATE,
    domain.InternalTemplate: ProblemType.TEMPLATE_INTERNAL,
    domain.TemplateChannelUnsupported: ProblemType.TEMPLATE_CHANNEL_UNSUPPORTED,
    domain.TemplateParamsInvalid: ProblemType.TEMPLATE_PARAMS_INVALID,
    domain.TemplateRetired: ProblemType.TEMPLATE_RETIRED,
    domain.InvalidRequest: ProblemType.INVALID_REQUEST,
    domain.UnknownCaller: ProblemType.UNKNOWN_CALLER,
    domain.NotAdmin: ProblemType.NOT_ADMIN,
    domain.DependencyUnavailable: ProblemType.DEPENDENCY_UNAVAILABLE,
}


def for_domain_error(exc: domain.DomainError) -> Response[str]:
    """The one place a use case's error becomes an HTTP status."""
    field_errors = exc.errors
    if isinstance(exc, domain.IdempotencyKeyMissing) and not field_errors:
        field_errors = [{"field": idempotency.HEADER, "message": "required unless the body has event_id"}]
    retry_after = None
    if isinstance(exc, domain.IdempotencyKeyInFlight | domain.DependencyUnavailable):
        retry_after = exc.retry_after_seconds
    kind = _TYPE_OF.get(type(exc), ProblemType.INVALID_REQUEST)
    return problem(kind, exc.detail, field_errors or None, retry_after)
