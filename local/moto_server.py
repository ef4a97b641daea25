"""A moto server that applies one request at a time.

moto's backends are not thread-safe, and the local stack makes requests from
several threads: the HTTP API, the scheduler's poll cycle and the poller's concurrent event
applies. DynamoDB serializes conflicting writes; this server serializes every request, so
threads interleave between requests only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from local import moto_journal, moto_sqs

READY_CHECK_SECONDS = 0.1  # how often start() looks whether the server thread is still alive
STOP_WAIT_SECONDS = 5.0  # serve_forever notices shutdown within its 0.5 s poll interval


class SerializedMotoServer(ThreadedMotoServer):
    """``between_requests`` runs after each request while the lock is still held: what it sees is
    the table between two requests, never one request half applied."""

    def __init__(self, ip_address: str, port: int) -> None:
        super().__init__(ip_address=ip_address, port=port, verbose=False)
        moto_journal.install()  # transactions cost what they touch, not the table's size
        moto_sqs.install()  # a receive costs one pass over the queue, not one per message
        self.lock = threading.RLock()
        self.between_requests: Callable[[], None] = lambda: None

    def _server_entry(self) -> None:
        app = DomainDispatcherApplication(create_backend_app)

        def serialized(environ: Any, start_response: Any) -> list[bytes]:
            with self.lock:
                body = list(app(environ, start_response))
                self.between_requests()
                return body

        self._server = make_server(self._ip_address, self._port, serialized, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()

    def start(self) -> None:
        """As moto's, but a server thread that dies (its port taken after all) is an error, not a hang."""
        self._thread = threading.Thread(target=self._server_entry, name="sendledger-moto", daemon=True)
        self._thread.start()
        while not self._server_ready_event.wait(READY_CHECK_SECONDS):
            if not self._thread.is_alive():
                raise RuntimeError(f"moto's server could not listen on {self._ip_address}:{self._port}")

    def stop(self) -> None:
        self._server_ready_event.clear()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_SECONDS)
