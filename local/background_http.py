"""An HTTP server served from a daemon thread: the local stack's gateway and simulated provider APIs."""

from __future__ import annotations

import logging
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOG = logging.getLogger("sendledger.local.http")
STOP_JOIN_SECONDS = 5  # a request in flight gets this long once the server is shut down
# Connections the kernel queues before the accept loop takes them. socketserver's default is 5:
# a burst of more simultaneous connections than that had its surplus reset by the kernel
# (ConnectionResetError on the client) while the server was busy accepting the first ones.
LISTEN_BACKLOG = 128
# A client that closed its connection before its answer was written (a curl interrupted, a
# browser tab closed, a timeout): its own doing, nothing to report.
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class _Server(ThreadingHTTPServer):
    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """socketserver prints a traceback to stderr for any error; one for a gone client is noise."""
        error = sys.exc_info()[1]
        if isinstance(error, CLIENT_GONE):
            LOG.debug("client %s went away before its answer was written: %r", client_address, error)
            return
        LOG.error("error while serving %s", client_address, exc_info=True)


class BackgroundHTTPServer:
    """`start()` serves on a daemon thread; `stop()` shuts down, closes the socket and joins."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str, host: str, port: int) -> None:
        self.server: ThreadingHTTPServer = _Server((host, port), handler)
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
