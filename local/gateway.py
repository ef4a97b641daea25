"""The local stack's HTTP front door: API Gateway's part (``local.apigateway``) and the local routes
(``local.local_routes``) behind one server.

The handler is a parameter, so the gateway is testable with a fake. Each request is logged as
one access line naming its route template (``local.access_log``). Every method token is served
(HEAD answers as GET, without the body), and no request, however malformed, gets a 5xx from the
gateway itself; a client that goes away before its answer is written is not an error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from local.access_log import UNROUTED, log_access
from local.apigateway import ApiGateway, Exchange, Handler, Response, method_not_allowed, problem
from local.auth import LocalAuth, Refused
from local.background_http import BackgroundHTTPServer
from local.constants import ACCOUNT_ID, API_FUNCTION
from local.lambda_context import LambdaContext, context_factory
from local.local_routes import Inspector, LocalRoutes, local_route

LOG = logging.getLogger("sendledger.local.gateway")
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
# http.server's own refusals kept as they are; any other code it raises is answered 400.
_HTTP_SERVER_CODES = frozenset({400, 414, 431})


class Gateway(BackgroundHTTPServer):
    """Translate HTTP to API Gateway events for ``handler`` (``webhooks`` for the providers' webhook
    routes, as deployed); serve the local-only routes."""

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
        webhooks: Handler | None = None,
        callers: Callable[[], list[str]] = list,
    ) -> None:
        self.auth = auth or LocalAuth.from_env(principal=principal, account_id=account_id)
        self.api = ApiGateway(
            handler,
            auth=self.auth,
            make_context=make_context or context_factory(API_FUNCTION),
            invoke_lock=invoke_lock or threading.RLock(),
            routes=routes,
            account_id=account_id,
            clock_ms=clock_ms,
            webhooks=webhooks,
        )
        self.local = LocalRoutes(
            self.api, outbox=outbox, poll=poll, events=events, inspector=inspector, callers=callers
        )
        super().__init__(_request_handler_class(self), name="sendledger-gateway", host=host, port=port)

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
        local = local_route(path)
        if local is None:
            return self.api.exchange(method, target, headers, body)
        template, allowed = local
        if method not in allowed:
            return method_not_allowed(method, allowed), template, UNROUTED
        caller = self.auth.local_route_caller(method, target, headers, body)
        if isinstance(caller, Refused):
            return problem(403, caller.detail), template, UNROUTED
        return self.local.serve(path, split.query), template, caller.name


def _request_handler_class(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
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
            status = code if code in _HTTP_SERVER_CODES else 400
            self._log_unrouted(status)  # the message may quote the request line: not logged
            if self.request_version == "HTTP/0.9":  # still the default: the version was unreadable
                self.request_version = self.protocol_version  # so the answer has a status line
            self.close_connection = True
            self._write(*problem(status, message or explain or HTTPStatus(status).phrase))

        def _write(self, status: int, lines: list[tuple[str, str]], payload: bytes) -> None:
            self.send_response(status)
            length = str(len(payload))
            for name, value in lines:
                if name.lower() == "content-length" and self.command == "HEAD" and not payload:
                    length = value  # the api Lambda's HEAD answer: the length its GET's body has
                elif name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", length)
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
