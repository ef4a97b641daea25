"""RFC 9457 problem documents: one builder, used by every error path."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://sendledger.dev/problems/"


def problem(
    status: int,
    slug: str,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    retry_after: int | None = None,
) -> Response[str]:
    body: dict[str, Any] = {
        "type": TYPE_BASE + slug,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return Response(status_code=status, content_type=PROBLEM_JSON, body=json.dumps(body), headers=headers)


def validation_errors(raw_errors: Any) -> list[dict[str, Any]]:
    """Pydantic/Powertools errors as `{field, message}` without echoing input values."""
    errors = []
    for error in raw_errors:
        location = [str(part) for part in error.get("loc", ()) if part not in ("body",)]
        errors.append({"field": ".".join(location) or "body", "message": str(error.get("msg", "invalid"))})
    return errors
