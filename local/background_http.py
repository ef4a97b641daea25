"""An HTTP server served from a daemon thread: the local stack's gateway and simulated provider APIs."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP_JOIN_SECONDS = 5  # a request in flight gets this long once the server is shut down


class BackgroundHTTPServer:
    """`start()` serves on a daemon thread; `stop()` shuts down, closes the socket and joins."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str, host: str, port: int) -> None:
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=STOP_JOIN_SECONDS)
