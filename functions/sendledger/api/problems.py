"""RFC 9457 problem documents: one builder, used by every error path."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response

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
