"""A local API Gateway (REST API, Lambda proxy integration, payload v1) over http.server.

Each HTTP request becomes the event API Gateway would hand the ``api`` Lambda; the proxy
response is written back. The handler is a parameter, so the gateway is testable with a fake.
The local-only routes are answered by the gateway itself: ``GET /local/outbox``,
``POST /local/poll``, the console (``GET /local/console``, ``GET /`` redirects there) and what
the console reads beside the API (``GET /local/messages``, ``GET /local/suppressions``).

Requests to the API routes are authenticated as API Gateway's IAM authorization does
(``local.auth``: SigV4 against the local credentials); the caller's identity goes into the
event's ``requestContext.identity``. Each request is logged as one access line naming its route
template (``local.access_log``).

Given a route table (the local stack passes ``sendledger.names.API_ROUTES``), the gateway routes
like API Gateway does, before the Lambda runs: an unknown path is a 404, a method the path does
not have a 405 with ``Allow``, both RFC 9457 problem documents. That holds for every method
token, and no request, however malformed, gets a 5xx from the gateway itself.
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
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, unquote, urlsplit

from local.access_log import UNROUTED, log_access
from local.auth import Caller, LocalAuth, Refused
from local.background_http import BackgroundHTTPServer
from local.console_files import HEADERS as CONSOLE_HEADERS
from local.console_files import INDEX, console_file
from local.constants import ACCOUNT_ID, API_FUNCTION
from local.lambda_context import LambdaContext, context_factory
from sendledger.api.problems import PROBLEM_JSON, TYPE_BASE

LOG = logging.getLogger("sendledger.local.gateway")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
STAGE = "local"
OUTBOX_PATH = "/local/outbox"
POLL_PATH = "/local/poll"
CONSOLE_PATH = "/local/console"
MESSAGES_PATH = "/local/messages"
SUPPRESSIONS_PATH = "/local/suppressions"
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
EVENTS_PATH = "/local/events"  # what reached the local EventBridge bus, oldest first
_READ = frozenset({"GET", "HEAD"})
LOCAL_ROUTES = {
    OUTBOX_PATH: _READ,
    POLL_PATH: frozenset({"POST"}),
    "/": _READ,
    CONSOLE_PATH: _READ,
    MESSAGES_PATH: _READ,
    SUPPRESSIONS_PATH: _READ,
    EVENTS_PATH: _READ,
}
# Local routes with a parameter: (prefix, route template); the rest of the path is one segment.
LOCAL_TEMPLATES = (
    (CONSOLE_PATH + "/", CONSOLE_PATH + "/{file}"),
    (MESSAGES_PATH + "/", MESSAGES_PATH + "/{message_id}"),
)
# The problem types the api Lambda uses for the same statuses; others are named after the phrase.
_PROBLEM_SLUGS = {400: "invalid-request", 404: "not-found", 413: "payload-too-large"}

Response = tuple[int, list[tuple[str, str]], bytes]


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
    phrase = HTTPStatus(status).phrase
    slug = _PROBLEM_SLUGS.get(status) or "-".join(phrase.lower().replace("-", " ").split())
    body = {"type": TYPE_BASE + slug, "title": phrase, "status": status, "detail": detail}
    return status, [("Content-Type", PROBLEM_JSON), *headers], json.dumps(body).encode("utf-8")


def method_not_allowed(method: str, allowed: frozenset[str]) -> Response:
    allow = ", ".join(sorted(allowed))
    return problem(405, f"{method} is not supported here; allowed: {allow}", [("Allow", allow)])


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
) -> dict[str, Any]:
    """The API Gateway REST (v1 proxy) event for one request.

    Its ``identity`` is IAM authorization's: ``userArn`` the signer's ARN (a role session's
    own), ``caller`` and ``user`` its unique id, ``accountId`` the signer's account.

    ``path`` is the path as sent (percent-encoding intact: the handler decodes path segments
    itself); query values are percent-decoded, ``+`` left alone, as API Gateway does.
    """
    split = urlsplit(target)
    path = split.path or "/"
    single_headers: dict[str, str] = {}
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        single_headers[name] = value
        multi_headers.setdefault(name, []).append(value)
    single_query: dict[str, str] = {}
    multi_query: dict[str, list[str]] = {}
    for pair in split.query.split("&") if split.query else []:
        if not pair:
            continue
        key, _, value = pair.partition("=")
        key, value = unquote(key), unquote(value)
        single_query[key] = value
        multi_query.setdefault(key, []).append(value)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    request_id = request_id or str(uuid.uuid4())
    user_agent = next((value for name, value in single_headers.items() if name.lower() == "user-agent"), None)
    try:
        text: str | None = body.decode("utf-8") if body else None
        is_base64 = False
    except UnicodeDecodeError:
        text, is_base64 = base64.b64encode(body).decode("ascii"), True
    request_time = datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": single_headers or None,
        "multiValueHeaders": multi_headers or None,
        "queryStringParameters": single_query or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourceId": "local",
            "resourcePath": path,
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


def _account_of(arn: str) -> str | None:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[4].isdigit() else None


def response_parts(response: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
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


class Inspector(Protocol):
    """What the console reads beside the API (``local.inspection.LedgerInspector``)."""

    def message(self, message_id: str, *, with_history: bool = True) -> dict[str, Any] | None: ...

    def messages(self, message_ids: list[str]) -> list[dict[str, Any]]: ...

    def recipients(self) -> list[str]: ...


Exchange = tuple[Response, str, str]  # the response, the route template, the caller's name


class Gateway(BackgroundHTTPServer):
    """Translate HTTP to API Gateway events for ``handler``; serve the local-only routes."""

    def __init__(
        self,
        handler: Handler,
        *,
        principal: str,
        outbox: Callable[[], list[dict[str, Any]]] = list,
        poll: Callable[[], dict[str, Any]] | None = None,
        make_context: Callable[[], LambdaContext] | None = None,
        invoke_lock: threading.RLock | None = None,
        routes: Iterable[tuple[str, str]] | None = None,
        account_id: str = ACCOUNT_ID,
        host: str = "127.0.0.1",
        port: int = 8080,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        events: Callable[[], list[dict[str, Any]]] = list,
        auth: LocalAuth | None = None,
        inspector: Inspector | None = None,
    ) -> None:
        self.events = events
        self.handler = handler
        self.principal = principal
        self.outbox = outbox
        self.poll = poll
        self.make_context = make_context or context_factory(API_FUNCTION)
        # Powertools' resolver keeps the current event on a module-level object: one
        # invocation at a time, as one Lambda execution environment would.
        self.invoke_lock = invoke_lock or threading.RLock()
        # None: every path and method goes to the handler (a fake's tests route nothing).
        self.routes = Routes(routes) if routes is not None else None
        self.account_id = account_id
        self.clock_ms = clock_ms
        self.auth = auth or LocalAuth.from_env(principal=principal, account_id=account_id)
        self.inspector = inspector
        super().__init__(self._request_handler_class(), name="sendledger-gateway", host=host, port=port)

    # --- one request ----------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> Response:
        started = time.perf_counter()
        response, route, caller = self._exchange(method, target, headers, body)
        log_access(method, route, response[0], (time.perf_counter() - started) * 1000, caller)
        return response

    def _exchange(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> Exchange:
        try:
            split = urlsplit(target)
        except ValueError:
            return problem(400, "the request target is not a valid URL"), UNROUTED, UNROUTED
        path = split.path or "/"
        local = self._local_route(path)
        if local is not None:
            template, allowed = local
            if method not in allowed:
                return method_not_allowed(method, allowed), template, UNROUTED
            return self._local(method, path, split.query), template, UNROUTED
        route = UNROUTED
        if self.routes is not None:
            route, allowed = self.routes.match(path)
            if not allowed:
                return problem(404, "no such route"), route, UNROUTED
            if method not in allowed:
                return method_not_allowed(method, allowed), route, UNROUTED
        caller = self.auth.authenticate(method, target, headers, body)
        if isinstance(caller, Refused):
            return problem(403, caller.detail), route, UNROUTED
        host = next((value for name, value in headers if name.lower() == "host"), "127.0.0.1")
        event = self._event(method, target, headers, body, caller, host)
        try:
            response = self._invoke(event)
            return response_parts(response), route, caller.name
        except Exception:
            # What API Gateway answers when the integration fails.
            LOG.exception("api handler raised for %s %s", method, route)
            return _json(502, {"message": "Internal server error"}), route, caller.name

    def _event(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, caller: Caller, host: str
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
        )

    def _invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        with self.invoke_lock:
            return self.handler(event, self.make_context())

    @staticmethod
    def _local_route(path: str) -> tuple[str, frozenset[str]] | None:
        allowed = LOCAL_ROUTES.get(path)
        if allowed is not None:
            return path, allowed
        for prefix, template in LOCAL_TEMPLATES:
            rest = path.removeprefix(prefix)
            if rest != path and rest and "/" not in rest:
                return template, _READ
        return None

    def _local(self, method: str, path: str, query: str) -> Response:
        if path == OUTBOX_PATH:
            return _json(200, self.outbox())
        if path == EVENTS_PATH:
            return _json(200, self.events())
        if path == POLL_PATH:
            return self._poll()
        if path == "/":
            return 302, [("Location", CONSOLE_PATH), ("Content-Type", "text/plain")], b""
        if path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/"):
            return self._console_file(INDEX if path == CONSOLE_PATH else path.rpartition("/")[2])
        if self.inspector is None:
            return problem(404, "the ledger inspector is not configured")
        try:
            if path == SUPPRESSIONS_PATH:
                return self._suppressions(self.inspector)
            if path == MESSAGES_PATH:
                ids = [i for v in parse_qs(query).get("ids", []) for i in v.split(",") if i]
                return _json(200, self.inspector.messages(ids))
            view = self.inspector.message(unquote(path.rpartition("/")[2]))
        except Exception as error:
            LOG.exception("reading the ledger for %s failed", path.rpartition("/")[0] or path)
            return problem(503, f"the ledger could not be read ({type(error).__name__})", [("Retry-After", "1")])
        return _json(200, view) if view is not None else problem(404, "no such message")

    def _poll(self) -> Response:
        if self.poll is None:
            return problem(404, "polling is not configured")
        try:
            return _json(200, self.poll())
        except Exception as error:
            # A poll cycle that fails is a dependency fault, as deployed: the next cycle retries it.
            LOG.exception("local poll failed")
            detail = f"poll cycle failed ({type(error).__name__}); it is retried"
            return problem(503, detail, [("Retry-After", "1")])

    @staticmethod
    def _console_file(name: str) -> Response:
        found = console_file(name)
        if found is None:
            return problem(404, "no such console file")
        content, content_type = found
        return 200, [("Content-Type", content_type), *CONSOLE_HEADERS], content

    def _suppressions(self, inspector: Inspector) -> Response:
        """Every known recipient's suppression view, exactly as ``GET /v1/suppressions/{r}`` answers it."""
        views: list[Any] = []
        for recipient in inspector.recipients():
            target = f"/v1/suppressions/{quote(recipient, safe='')}"
            event = self._event("GET", target, [], b"", self.auth.unsigned, "127.0.0.1")
            status, _, payload = response_parts(self._invoke(event))
            if status == 503:
                return problem(503, "the ledger could not be read", [("Retry-After", "1")])
            if status == 200:
                views.append(json.loads(payload))
        return _json(200, views)

    def _request_handler_class(self) -> type[BaseHTTPRequestHandler]:
        gateway = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "sendledger-local"

            def __getattr__(self, name: str) -> Any:
                # http.server answers 501 to a method without a do_<METHOD>: serve every token.
                if name.startswith("do_"):
                    return self._serve
                raise AttributeError(name)

            def handle_one_request(self) -> None:
                self.started = time.perf_counter()
                super().handle_one_request()

            def _serve(self) -> None:
                length = self._content_length()
                if length is None:
                    return
                body = self.rfile.read(length) if length else b""
                status, lines, payload = gateway.handle(self.command, self.path, list(self.headers.items()), body)
                self._write(status, lines, payload)

            def _content_length(self) -> int | None:
                """The body's length, or None once an error is answered (the body is then unread)."""
                if "Transfer-Encoding" in self.headers:
                    self._refuse(problem(411, "send the body with a Content-Length"))
                    return None
                raw = (self.headers.get("Content-Length") or "0").strip()
                if not raw.isdigit():
                    self._refuse(problem(400, "Content-Length is not a number of bytes"))
                    return None
                if int(raw) > MAX_BODY_BYTES:
                    self._refuse(problem(413, f"bodies are limited to {MAX_BODY_BYTES} bytes"))
                    return None
                return int(raw)

            def _refuse(self, response: Response) -> None:
                self.close_connection = True  # the unread body must not be parsed as a request
                self._log_unrouted(response[0])
                self._write(*response)

            def _log_unrouted(self, status: int) -> None:
                latency_ms = (time.perf_counter() - getattr(self, "started", time.perf_counter())) * 1000
                log_access(self.command or "-", UNROUTED, status, latency_ms, UNROUTED)

            def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
                """http.server's own errors (malformed request lines, headers), as problems."""
                # 505 (an HTTP/2 request line) is the client's doing: no input earns a 5xx.
                status = 400 if code >= 500 else code
                self._log_unrouted(status)  # the message may quote the request line: not logged
                if self.request_version == "HTTP/0.9":  # still the default: the version was unreadable
                    self.request_version = self.protocol_version  # so the answer has a status line
                self.close_connection = True
                self._write(*problem(status, message or explain or HTTPStatus(status).phrase))

            def _write(self, status: int, lines: list[tuple[str, str]], payload: bytes) -> None:
                self.send_response(status)
                for name, value in lines:
                    if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                """Replaced by the access line (http.server's quotes the request line as sent)."""

            def log_message(self, format: str, *args: Any) -> None:
                LOG.debug("http.server: %s", format % args)

        return RequestHandler


def _json(status: int, payload: Any) -> Response:
    is_problem = isinstance(payload, dict) and "title" in payload
    content_type = PROBLEM_JSON if is_problem else "application/json"
    return status, [("Content-Type", content_type)], json.dumps(payload).encode("utf-8")
