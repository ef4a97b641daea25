"""SendGridSide over HTTP (the local stack) and in-process (tests): the adapter's two transports.

Over HTTP a `Dropped` request gets its connection closed with no answer, which urllib3 reports
as a protocol error: the send may have been accepted. In-process it raises urllib3's
ReadTimeoutError, what the adapter sees when SendGrid is slower than the read timeout.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from urllib3.exceptions import ReadTimeoutError

from local.background_http import BackgroundHTTPServer
from local.simulator.sendgrid import Dropped, SendGridSide
from sendledger.providers.http import HttpAnswer

LOG = logging.getLogger("sendledger.local.simulator")


class InProcessHttp:
    """The adapters' Http port answered by the simulator directly (no socket)."""

    def __init__(self, side: SendGridSide) -> None:
        self.side = side
        self.requests: list[tuple[str, str]] = []  # (method, url) of every call

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.requests.append((method, url))
        try:
            answer = self.side.handle(method, url, dict(headers), body or b"")
        except Dropped as dropped:
            raise ReadTimeoutError(None, url, f"simulated read timeout ({dropped})") from None  # type: ignore[arg-type]
        return HttpAnswer(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.body)


class SendGridServer(BackgroundHTTPServer):
    """SendGrid's API on 127.0.0.1 (an ephemeral port unless one is given)."""

    def __init__(self, side: SendGridSide, host: str = "127.0.0.1", port: int = 0) -> None:
        self.side = side
        super().__init__(self._handler_class(), name="sendgrid-simulator", host=host, port=port)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        side = self.side

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "sendgrid-simulator"

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    answer = side.handle(self.command, self.path, dict(self.headers.items()), body)
                except Dropped:
                    self.close_connection = True  # no status line at all: the caller cannot know
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    if name.lower() != "content-length":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                LOG.debug("sendgrid simulator: %s", format % args)

        return Handler
