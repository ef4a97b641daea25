"""A simulated provider's HTTP API over a socket (the local stack) and in-process (tests).

A simulator side is one function: (method, target, headers, body) → an `Answer`, or `Dropped`
when the caller must see no answer at all. Over HTTP a dropped request gets its connection
closed with no status line, which urllib3 reports as a protocol error: the send may have been
accepted. In-process it raises urllib3's ReadTimeoutError, what an adapter sees when the
provider is slower than its read timeout.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from urllib3.exceptions import ReadTimeoutError

from local.background_http import BackgroundHTTPServer
from sendledger.providers.http import HttpAnswer

LOG = logging.getLogger("sendledger.local.simulator")


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Dropped(Exception):
    """The connection is dropped without an answer (a read timeout, as the caller sees it)."""

    def __init__(self, accepted: bool) -> None:
        super().__init__("accepted, answer lost" if accepted else "never accepted")
        self.accepted = accepted


Handle = Callable[[str, str, dict[str, str], bytes], Answer]


class InProcessHttp:
    """The adapters' Http port answered by the simulator directly (no socket)."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.requests: list[tuple[str, str]] = []  # (method, url) of every call

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.requests.append((method, url))
        try:
            answer = self.handle(method, url, dict(headers), body or b"")
        except Dropped as dropped:
            raise ReadTimeoutError(None, url, f"simulated read timeout ({dropped})") from None  # type: ignore[arg-type]
        return HttpAnswer(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.body)


class SimulatorServer(BackgroundHTTPServer):
    """A simulated provider's API on 127.0.0.1 (an ephemeral port unless one is given)."""

    def __init__(self, handle: Handle, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handle = handle
        super().__init__(self._handler_class(name), name=f"{name}-simulator", host=host, port=port)

    def _handler_class(self, name: str) -> type[BaseHTTPRequestHandler]:
        handle = self.handle

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = f"{name}-simulator"

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    answer = handle(self.command, self.path, dict(self.headers.items()), body)
                except Dropped:
                    self.close_connection = True  # no status line at all: the caller cannot know
                    return
                self.send_response(answer.status)
                for header, value in answer.headers.items():
                    if header.lower() != "content-length":
                        self.send_header(header, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                LOG.debug("%s simulator: %s", name, format % args)

        return Handler
