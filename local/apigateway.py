"""API Gateway (HTTP API, Lambda proxy integration, payload format 1.0) as the local stack plays it.

Each request to an API route becomes the event API Gateway would hand the ``api`` Lambda, and
the proxy response is translated back. Given a route table (the local stack passes
``sendledger.names.API_ROUTES``), requests are routed as API Gateway routes them, before the
Lambda runs: an unknown path is a 404, a method the path does not have a 405 with ``Allow``.

Requests are authenticated as API Gateway's IAM authorization does (``local.auth``: SigV4
against the local credentials); the caller's identity goes into ``requestContext.identity``.
An unsigned ``GET /healthz`` is answered in either mode, so that a readiness check needs no
credential (a signed one is verified like any other request).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from local.access_log import UNROUTED
from local.auth import Caller, LocalAuth, Refused
from local.constants import ACCOUNT_ID
from local.lambda_context import LambdaContext
from sendledger import names
from sendledger.api.problems import PROBLEM_JSON, TYPE_BASE, ProblemType
from sendledger.domain.errors import echo

LOG = logging.getLogger("sendledger.local.gateway")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
Response = tuple[int, list[tuple[str, str]], bytes]
Exchange = tuple[Response, str, str]  # the response, the route template, the caller's name
STAGE = "local"
HEALTH_PATH = "/healthz"  # answered for any caller, signed or not (see the module docstring)
# The gateway's own answers, typed as the api Lambda types the same statuses; any other 4xx
# http.server raises (408 and the like) is an unreadable request.
_PROBLEM_TYPES = {
    403: ProblemType.NOT_AUTHORIZED,
    404: ProblemType.NOT_FOUND,
    405: ProblemType.METHOD_NOT_ALLOWED,
    411: ProblemType.LENGTH_REQUIRED,
    413: ProblemType.PAYLOAD_TOO_LARGE,
    414: ProblemType.URI_TOO_LONG,
    431: ProblemType.HEADERS_TOO_LARGE,
    503: ProblemType.DEPENDENCY_UNAVAILABLE,
}


class Routes:
    """A route table: (method, path template) pairs, ``{name}`` matching one path segment."""

    def __init__(self, routes: Iterable[tuple[str, str]]) -> None:
        methods: dict[str, set[str]] = {}
        for method, template in routes:
            methods.setdefault(template, set()).add(method)
        self._table = [
            (_template_pattern(template), template, frozenset(allowed)) for template, allowed in methods.items()
        ]

    def match(self, path: str) -> tuple[str, frozenset[str]]:
        """The route template ``path`` matches and its methods; (UNROUTED, empty) for none."""
        for pattern, template, methods in self._table:
            if pattern.fullmatch(path):
                return template, methods
        return UNROUTED, frozenset()

    def allowed(self, path: str) -> frozenset[str]:
        """The methods ``path`` supports; empty for a path no route has."""
        return self.match(path)[1]


def _template_pattern(template: str) -> re.Pattern[str]:
    parts = ("[^/]+" if re.fullmatch(r"\{\w+\}", part) else re.escape(part) for part in template.split("/"))
    return re.compile("/".join(parts))


def problem(status: int, detail: str, headers: Iterable[tuple[str, str]] = ()) -> Response:
    """An RFC 9457 problem document, shaped like the api Lambda's."""
    kind = _PROBLEM_TYPES.get(status, ProblemType.INVALID_REQUEST)
    body = {"type": TYPE_BASE + kind, "title": HTTPStatus(status).phrase, "status": status, "detail": detail}
    return status, [("Content-Type", PROBLEM_JSON), *headers], json.dumps(body).encode("utf-8")


def method_not_allowed(method: str, allowed: frozenset[str]) -> Response:
    allow = ", ".join(sorted(allowed))
    return problem(405, f"{echo(method)} is not supported here; allowed: {allow}", [("Allow", allow)])


def json_response(status: int, payload: Any) -> Response:
    is_problem = isinstance(payload, dict) and "title" in payload
    content_type = PROBLEM_JSON if is_problem else "application/json"
    return status, [("Content-Type", content_type)], json.dumps(payload).encode("utf-8")


def query_parameters(query: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(single, multi) query parameters as API Gateway hands them over: form-decoded.

    A ``+`` is a space and ``%2B`` a plus, as in HTML form encoding (API Gateway's proxy
    events carry ``?q=a+b`` as ``a b``); the last of repeated names wins in the single map.
    """
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for pair in query.split("&") if query else []:
        if not pair:
            continue
        key, _, value = pair.partition("=")
        key, value = unquote_plus(key), unquote_plus(value)
        single[key] = value
        multi.setdefault(key, []).append(value)
    return single, multi


def build_event(
    *,
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    principal: str,
    access_key: str = "AKIALOCALDEVELOPER00",
    caller: str | None = None,
    account_id: str = ACCOUNT_ID,
    source_ip: str = "127.0.0.1",
    host: str = "127.0.0.1",
    now_ms: int | None = None,
    request_id: str | None = None,
    route: str | None = None,
) -> dict[str, Any]:
    """The HTTP API's Lambda proxy event (payload format 1.0) for one request.

    As an HTTP API hands it over: header names lower-cased, a repeated header or query name
    joined with commas in the single-value maps (every value kept in the multi-value ones),
    `version` 1.0 and the `routeKey` of the matched route (`route`: its path template).
    Its ``identity`` is IAM authorization's: ``userArn`` the signer's ARN (a role session's
    own), ``caller`` and ``user`` its unique id, ``accountId`` the signer's account.

    ``path`` is the path as sent (percent-encoding intact: the handler decodes path segments
    itself); query values are decoded as ``query_parameters`` says.
    """
    split = urlsplit(target)
    path = split.path or "/"
    template = route or path
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        multi_headers.setdefault(name.lower(), []).append(value)
    single_headers = {name: ",".join(values) for name, values in multi_headers.items()}
    _, multi_query = query_parameters(split.query)
    single_query = {name: ",".join(values) for name, values in multi_query.items()}
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    request_id = request_id or str(uuid.uuid4())
    user_agent = single_headers.get("user-agent")
    try:
        text: str | None = body.decode("utf-8") if body else None
        is_base64 = False
    except UnicodeDecodeError:
        text, is_base64 = base64.b64encode(body).decode("ascii"), True
    request_time = datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
    route_key = f"{method} {template}"
    return {
        "version": "1.0",
        "resource": template,
        "path": path,
        "httpMethod": method,
        "headers": single_headers or None,
        "multiValueHeaders": multi_headers or None,
        "queryStringParameters": single_query or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": _path_parameters(template, path),
        "stageVariables": None,
        "requestContext": {
            "resourceId": route_key,
            "resourcePath": template,
            "routeKey": route_key,
            "httpMethod": method,
            "extendedRequestId": request_id,
            "requestTime": request_time,
            "path": f"/{STAGE}{path}",
            "accountId": account_id,
            "protocol": "HTTP/1.1",
            "stage": STAGE,
            "domainPrefix": "local",
            "requestTimeEpoch": now_ms,
            "requestId": request_id,
            "identity": {
                "cognitoIdentityPoolId": None,
                "accountId": _account_of(principal) or account_id,
                "cognitoIdentityId": None,
                "caller": caller or principal,
                "sourceIp": source_ip,
                "principalOrgId": None,
                "accessKey": access_key,
                "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None,
                "userArn": principal,
                "userAgent": user_agent,
                "user": caller or principal,
            },
            "domainName": host,
            "apiId": "local",
        },
        "body": text,
        "isBase64Encoded": is_base64,
    }


def _path_parameters(template: str, path: str) -> dict[str, str] | None:
    """The route's `{name}` segments as the HTTP API hands them over (percent-decoded)."""
    found = {
        part.strip("{}"): unquote(segment)
        for part, segment in zip(template.split("/"), path.split("/"), strict=False)
        if re.fullmatch(r"\{\w+\}", part)
    }
    return found or None


def _account_of(arn: str) -> str | None:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[4].isdigit() else None


def response_parts(response: dict[str, Any]) -> Response:
    """Status, header lines and body bytes from a Lambda proxy response."""
    status = int(response.get("statusCode", 200))
    lines: list[tuple[str, str]] = []
    multi = response.get("multiValueHeaders") or {}
    multi_names = {name.lower() for name in multi}
    for name, values in multi.items():
        lines.extend((name, str(value)) for value in values)
    for name, value in (response.get("headers") or {}).items():
        if name.lower() not in multi_names:
            lines.append((name, str(value)))
    raw = response.get("body")
    if raw is None:
        body = b""
    elif response.get("isBase64Encoded"):
        body = base64.b64decode(raw)
    else:
        body = str(raw).encode("utf-8")
    return status, lines, body


class ApiGateway:
    """Route, authenticate and invoke ``handler`` for one request to an API route."""

    def __init__(
        self,
        handler: Handler,
        *,
        auth: LocalAuth,
        make_context: Callable[[], LambdaContext],
        invoke_lock: threading.RLock,
        routes: Iterable[tuple[str, str]] | None,
        account_id: str,
        clock_ms: Callable[[], int],
        webhooks: Handler | None = None,
    ) -> None:
        self.handler = handler
        # As deployed, the providers' webhook routes invoke a function of their own (infra/webhooks.py).
        self.webhooks = webhooks
        self.auth = auth
        self.make_context = make_context
        # Powertools' resolver keeps the current event on a module-level object: one
        # invocation at a time, as one Lambda execution environment would.
        self.invoke_lock = invoke_lock
        # None: every path and method goes to the handler (a fake's tests route nothing).
        self.routes = Routes(routes) if routes is not None else None
        self.account_id = account_id
        self.clock_ms = clock_ms

    def exchange(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> Exchange:
        path = urlsplit(target).path or "/"
        route = UNROUTED
        if self.routes is not None:
            route, allowed = self.routes.match(path)
            if not allowed:
                return problem(404, "no such route"), route, UNROUTED
            if method not in allowed:
                return method_not_allowed(method, allowed), route, UNROUTED
        signed = any(name.lower() == "authorization" for name, _ in headers)
        if path == HEALTH_PATH and not signed:
            caller: Caller | Refused = self.auth.unsigned
        else:
            caller = self.auth.authenticate(method, target, headers, body)
        if isinstance(caller, Refused):
            return problem(403, caller.detail), route, UNROUTED
        host = next((value for name, value in headers if name.lower() == "host"), "127.0.0.1")
        try:
            response = self.invoke(self.event(method, target, headers, body, caller, host, route))
            return response_parts(response), route, caller.name
        except Exception:
            # What API Gateway answers when the integration fails.
            LOG.exception("api handler raised for %s %s", method, route)
            return json_response(502, {"message": "Internal server error"}), route, caller.name

    def event(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        caller: Caller,
        host: str,
        route: str | None = None,
    ) -> dict[str, Any]:
        return build_event(
            method=method,
            target=target,
            headers=headers,
            body=body,
            principal=caller.arn,
            access_key=caller.access_key,
            caller=caller.user_id,
            account_id=self.account_id,
            host=host,
            now_ms=self.clock_ms(),
            route=route if route != UNROUTED else None,
        )

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        handler = self.handler
        if self.webhooks is not None and str(event.get("path", "")).startswith(names.PROVIDERS_PATH):
            handler = self.webhooks
        with self.invoke_lock:
            return handler(event, self.make_context())

    def get_unsigned(self, target: str) -> Response:
        """``GET target`` as the local principal, past authentication (the console's own reads)."""
        return response_parts(self.invoke(self.event("GET", target, [], b"", self.auth.unsigned, "127.0.0.1")))
