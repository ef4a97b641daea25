"""A local API Gateway (REST API, Lambda proxy integration, payload v1) over http.server.

Each HTTP request becomes the event API Gateway would hand the ``api`` Lambda; the proxy
response is written back. The handler is a parameter, so the gateway is testable with a fake.
Two local-only routes are answered by the gateway itself: ``GET /local/outbox`` and
``POST /local/poll``.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from local.constants import ACCOUNT_ID, API_FUNCTION
from local.lambda_context import LambdaContext, context_factory

LOG = logging.getLogger("sendledger.local.gateway")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
STAGE = "local"
OUTBOX_PATH = "/local/outbox"
POLL_PATH = "/local/poll"
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit


def build_event(
    *,
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    principal: str,
    account_id: str = ACCOUNT_ID,
    source_ip: str = "127.0.0.1",
    host: str = "127.0.0.1",
    now_ms: int | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """The API Gateway REST (v1 proxy) event for one request.

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
                "accountId": account_id,
                "cognitoIdentityId": None,
                "caller": principal,
                "sourceIp": source_ip,
                "principalOrgId": None,
                "accessKey": "AKIALOCALDEVELOPER00",
                "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None,
                "userArn": principal,
                "userAgent": user_agent,
                "user": principal,
            },
            "domainName": host,
            "apiId": "local",
        },
        "body": text,
        "isBase64Encoded": is_base64,
    }


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


class Gateway:
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
        account_id: str = ACCOUNT_ID,
        host: str = "127.0.0.1",
        port: int = 8080,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.handler = handler
        self.principal = principal
        self.outbox = outbox
        self.poll = poll
        self.make_context = make_context or context_factory(API_FUNCTION)
        # Powertools' resolver keeps the current event on a module-level object: one
        # invocation at a time, as one Lambda execution environment would.
        self.invoke_lock = invoke_lock or threading.RLock()
        self.account_id = account_id
        self.clock_ms = clock_ms
        self.server = ThreadingHTTPServer((host, port), self._request_handler_class())
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, name="sendledger-gateway", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- one request ----------------------------------------------------------------------
    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        path = urlsplit(target).path
        if path == OUTBOX_PATH and method in {"GET", "HEAD"}:
            return _json(200, self.outbox())
        if path == POLL_PATH and method == "POST":
            if self.poll is None:
                return _json(404, {"title": "polling is not configured", "status": 404})
            try:
                return _json(200, self.poll())
            except Exception as error:
                LOG.exception("local poll failed")
                return _json(500, {"title": "poll failed", "status": 500, "detail": repr(error)})
        host = next((value for name, value in headers if name.lower() == "host"), "127.0.0.1")
        event = build_event(
            method=method,
            target=target,
            headers=headers,
            body=body,
            principal=self.principal,
            account_id=self.account_id,
            host=host,
            now_ms=self.clock_ms(),
        )
        try:
            with self.invoke_lock:
                response = self.handler(event, self.make_context())
            return response_parts(response)
        except Exception:
            # What API Gateway answers when the integration fails.
            LOG.exception("api handler raised for %s %s", method, target)
            return _json(502, {"message": "Internal server error"})

    def _request_handler_class(self) -> type[BaseHTTPRequestHandler]:
        gateway = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "sendledger-local"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self._write(413, [], b'{"message": "Request Entity Too Large"}')
                    return
                body = self.rfile.read(length) if length else b""
                status, lines, payload = gateway.handle(self.command, self.path, list(self.headers.items()), body)
                self._write(status, lines, payload)

            def _write(self, status: int, lines: list[tuple[str, str]], payload: bytes) -> None:
                self.send_response(status)
                for name, value in lines:
                    if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

            def log_message(self, format: str, *args: Any) -> None:
                LOG.info("%s %s", self.address_string(), format % args)

        return RequestHandler


def _json(status: int, payload: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    problem = isinstance(payload, dict) and "title" in payload
    content_type = "application/problem+json" if problem else "application/json"
    return status, [("Content-Type", content_type)], json.dumps(payload).encode("utf-8")
