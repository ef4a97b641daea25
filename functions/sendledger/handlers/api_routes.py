"""The api's routes but the send's hot path: the Powertools router with its request models and
OpenAPI validation (payload format 1.0, the REST event shape its REST resolver reads). handlers/api.py
is the Lambda's entry; it imports this module on the container's first request of these routes."""

from __future__ import annotations

import json
from functools import partial
from typing import Annotated
from urllib.parse import unquote, urlencode

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Header, Query

from sendledger import bootstrap
from sendledger.api import openapi
from sendledger.api.models import (
    AdminSuppressionView,
    ConsumeResetRequest,
    MessageView,
    PasswordResetRequest,
    ResetAccepted,
    ResetConsumed,
    ResetEvidenceView,
    SendMessageRequest,
    SuppressionView,
    SuppressRequest,
)
from sendledger.api.openapi import documented
from sendledger.api.problems import JSON, ProblemType, problem, schema_mismatch, validation_errors
from sendledger.api.responses import (
    json_response,
    message_response,
    suppression_response,
)
from sendledger.domain import errors, idempotency
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso
from sendledger.handlers import caller_routes, request_gate, template_routes
from sendledger.handlers.invocation import caller_of, current_runtime, identity_arn
from sendledger.handlers.send_route import send
from sendledger.usecases import messages, suppressions
from sendledger.usecases.results import ResetRequested, TokenConsumed
from sendledger.usecases.views import message_view, reset_evidence_view

NDJSON = "application/x-ndjson"

# Documents the key's one limit; the check itself is idempotency.parse_key (the unquoted key counts).
IDEMPOTENCY_KEY = Header(
    alias=idempotency.HEADER,
    description='1-255 printable ASCII characters; a quoted Structured Field string ("abc") is unquoted first',
    json_schema_extra={"minLength": 1, "maxLength": idempotency.MAX_KEY_LENGTH, "pattern": "^[\\x20-\\x7E]+$"},
)

logger = Logger(child=True)  # the entry's (handlers/api.py), whose context each request sets
app = APIGatewayRestResolver(enable_validation=True)


def _runtime() -> bootstrap.Runtime:
    """Built on first use, so a request refused before any route runs needs no AWS call."""
    return current_runtime()


def _caller() -> CallerId:
    return caller_of(app.current_event.raw_event).id


def _actor() -> str:
    return identity_arn(app.current_event.raw_event)


@app.post("/v1/messages", responses=documented(202, MessageView, 400, 409, 413, 415, 429, 503))
def post_message(
    body: SendMessageRequest,
    idempotency_key: Annotated[str | None, IDEMPOTENCY_KEY] = None,
) -> Response[str]:
    """The send's contract as the OpenAPI document gives it. The api's entry answers the route
    itself (handlers/send_route.py: the same rules, checked by hand); a request that reaches this router
    is answered the same way."""
    return send(app.current_event.raw_event, app.lambda_context)


@app.get("/v1/messages/<message_id>", responses=documented(200, MessageView, 404, 503))
def get_message(message_id: str) -> Response[str]:
    runtime = _runtime()
    message = messages.get_message(runtime.messages, message_id, _caller())
    if message is None:
        return problem(ProblemType.NOT_FOUND, f"no message {errors.echo(message_id)}")
    return message_response(200, message_view(message, runtime.settings, with_history=True))


@app.get("/v1/messages", responses=documented(200, MessageView, 400, 404, 503))
def find_message(
    idempotency_key: Annotated[str | None, Query(min_length=1, max_length=1024)] = None,
    event_id: Annotated[str | None, Query(min_length=1, max_length=255)] = None,
    template_version: Annotated[str | None, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")] = None,
) -> Response[str]:
    """The caller's message for an Idempotency-Key, or for an event_id and template version."""
    from sendledger.usecases import evidence  # evidence reads: not on the send path's cold start

    runtime = _runtime()
    message = evidence.find_message(runtime.messages, _caller(), idempotency_key, event_id, template_version)
    if message is None:
        return problem(ProblemType.NOT_FOUND, "no message of yours has that key")
    return message_response(200, message_view(message, runtime.settings, with_history=True))


@app.get("/v1/password-resets/<reset_id>", responses=documented(200, ResetEvidenceView, 404, 503))
def get_password_reset(reset_id: str) -> Response[str]:
    from sendledger.usecases import evidence  # evidence reads: not on the send path's cold start

    runtime = _runtime()
    found = evidence.reset_evidence(runtime.messages, runtime.resets, runtime.clock.now(), _caller(), reset_id)
    if found is None:
        return problem(ProblemType.NOT_FOUND, f"no reset {errors.echo(reset_id)}")
    return json_response(200, reset_evidence_view(found, runtime.settings))


@app.get("/v1/evidence", responses=documented(200, MessageView, 400, 503, media_type=NDJSON))
def get_evidence(
    since: Annotated[str, Query(min_length=1, max_length=64)],
    until: Annotated[str, Query(min_length=1, max_length=64)],
    cursor: Annotated[str | None, Query(min_length=1, max_length=512)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> Response[str]:
    """NDJSON: one line per message the caller created in [since, until), oldest first, each
    with its history; `Link: <...>; rel="next"` while more remain."""
    from sendledger.usecases import evidence  # evidence reads: not on the send path's cold start

    runtime = _runtime()
    page = evidence.export(runtime.messages, _caller(), since, until, cursor, limit)
    lines = [json.dumps(message_view(m, runtime.settings, with_history=True)) + "\n" for m in page.messages]
    headers: dict[str, str] = {}
    if page.cursor is not None:
        query: dict[str, str | int] = {"since": since, "until": until, "cursor": page.cursor}
        if limit is not None:
            query["limit"] = limit
        # Relative to the request's own URL, so it holds behind any stage or base path.
        headers["Link"] = f'<evidence?{urlencode(query)}>; rel="next"'
    return Response(status_code=200, content_type=NDJSON, body="".join(lines), headers=headers)


@app.post("/v1/password-resets", responses=documented(202, ResetAccepted, 400, 413, 415, 503))
def post_password_reset(body: PasswordResetRequest) -> Response[str]:
    requested: ResetRequested = _runtime().reset_requests.request(
        _caller(), body.account_id, body.email, provider=body.provider, locale=body.locale
    )
    accepted = {"reset_id": requested.reset_id, "state": "requested", "expires_at": iso(requested.expires_at)}
    return json_response(202, accepted)


@app.post("/v1/password-resets/consume", responses=documented(200, ResetConsumed, 400, 413, 415, 503))
def post_password_reset_consume(body: ConsumeResetRequest) -> Response[str]:
    result = _runtime().reset_tokens.consume(_caller(), body.account_id, body.token)
    if isinstance(result, TokenConsumed):
        return json_response(200, {"reset_id": result.reset_id, "account_id": result.account_id})
    return problem(ProblemType.INVALID_TOKEN, "the token is invalid, expired or already used")


@app.get("/v1/suppressions/<recipient>", responses=documented(200, SuppressionView, 400, 503))
def get_suppression(recipient: str) -> Response[str]:
    """The caller's view: state, reason class, since, version, and what its own messages caused."""
    runtime = _runtime()
    status = suppressions.client_view(runtime.recipients, runtime.messages, unquote(recipient), _caller())
    return suppression_response(status, admin=False)


@app.get("/v1/admin/suppressions/<recipient>", responses=documented(200, AdminSuppressionView, 400, 403, 503))
def get_admin_suppression(recipient: str) -> Response[str]:
    """The admin's view: the whole history, actors, free-text reasons and every event id."""
    return suppression_response(suppressions.view_suppression(_runtime().recipients, unquote(recipient)), admin=True)


@app.put("/v1/admin/suppressions/<recipient>", responses=documented(200, AdminSuppressionView, 400, 403, 413, 415, 503))
def put_suppression(recipient: str, body: SuppressRequest) -> Response[str]:
    runtime = _runtime()
    change = partial(suppressions.change_suppression, runtime.recipients, runtime.clock)
    status = change(unquote(recipient), True, body.reason, _actor())
    return suppression_response(status, admin=True)


@app.delete("/v1/admin/suppressions/<recipient>", responses=documented(200, AdminSuppressionView, 400, 403, 503))
def delete_suppression(recipient: str, reason: Annotated[str, Query(min_length=1, max_length=500)]) -> Response[str]:
    runtime = _runtime()
    change = partial(suppressions.change_suppression, runtime.recipients, runtime.clock)
    status = change(unquote(recipient), False, reason, _actor())
    return suppression_response(status, admin=True)


app.include_router(caller_routes.router)
app.include_router(template_routes.router)


@app.get("/healthz")
def healthz() -> Response[str]:
    return Response(status_code=200, content_type=JSON, body='{"status":"ok"}')


@app.get("/openapi.json", include_in_schema=False)
def openapi_document() -> Response[str]:
    return Response(status_code=200, content_type=JSON, body=openapi_json())


def openapi_json() -> str:
    """The callers' routes and the providers' webhook route (served by the webhooks Lambda), in one document."""
    from sendledger.handlers import webhooks

    return openapi.document_json(app, webhooks.app)


# --- errors: every one is application/problem+json ----------------------------------------
@app.exception_handler(RequestValidationError)
def on_validation_error(exc: RequestValidationError) -> Response[str]:
    return schema_mismatch(validation_errors(exc.errors()))


request_gate.answer_problems(app, logger)
