"""A callback receiver on 127.0.0.1 (port 0): what an app behind CALLBACK_URL does, faults included.

It checks every signature itself (the README's recipe: HMAC-SHA256 of "<t>.<raw body>", the
standard library only), records every request it got, and answers as its plan says for each
attempt of an event id:

- ``ok``: 204;
- ``5xx``: 503, nothing processed;
- ``slow``: processed, then the answer comes after the sender has given up (a timeout the
  receiver did not notice: the retry is a duplicate it must drop by id);
- ``reset``: the connection is reset (RST) before any answer, nothing processed;
- ``blackhole``: the request is read and never answered, nothing processed.

Waits are bounded: a held request is released at ``close()`` or after ``hold_seconds``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK, FAIL, SLOW, RESET, BLACKHOLE = "ok", "5xx", "slow", "reset", "blackhole"
PROCESSED = {OK, SLOW}

Plan = Callable[[str, int], str]  # (event id, its attempt number from 1) → mode


def always(mode: str) -> Plan:
    return lambda _event_id, _attempt: mode


def first(count: int, mode: str) -> Plan:
    """The first ``count`` attempts of every id meet ``mode``; later ones are answered 204."""
    return lambda _event_id, attempt: mode if attempt <= count else OK


def signature_valid(secret: str, header: str | None, body: bytes) -> bool:
    if not header:
        return False
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    if "t" not in parts or "v1" not in parts:
        return False
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


@dataclass(frozen=True)
class Got:
    event_id: str | None
    body: bytes
    headers: dict[str, str]
    valid: bool
    mode: str
    signed_at: int | None  # the signature's t


class Receiver:
    def __init__(
        self, secret: str, plan: Plan = always(OK), *, slow_seconds: float = 0.5, hold_seconds: float = 5
    ) -> None:
        self.secret = secret
        self.plan = plan
        self.slow_seconds = slow_seconds
        self.hold_seconds = hold_seconds
        self.requests: list[Got] = []
        self.attempts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mode = receiver._record({k.lower(): v for k, v in self.headers.items()}, body)
                receiver._answer(self, mode)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a reset or abandoned connection is the point, not an error

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/sendledger"

    def close(self) -> None:
        self._released.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what it got ----------------------------------------------------------------------
    def processed(self) -> dict[str, list[Got]]:
        """Event id → the requests it accepted (valid signature, processed), in order."""
        found: dict[str, list[Got]] = {}
        for got in self.requests:
            if got.valid and got.mode in PROCESSED and got.event_id:
                found.setdefault(got.event_id, []).append(got)
        return found

    def invalid(self) -> list[Got]:
        return [got for got in self.requests if not got.valid]

    def forget(self) -> None:
        with self._lock:
            self.requests.clear()
            self.attempts.clear()

    # --- serving --------------------------------------------------------------------------
    def _record(self, headers: dict[str, str], body: bytes) -> str:
        event_id = headers.get("sendledger-event-id")
        signature = headers.get("sendledger-signature")
        valid = signature_valid(self.secret, signature, body) and _id_of(body) == event_id
        with self._lock:
            self.attempts[event_id or ""] += 1
            mode = self.plan(event_id or "", self.attempts[event_id or ""])
            signed_at = dict(p.split("=", 1) for p in (signature or "").split(",") if "=" in p).get("t")
            self.requests.append(Got(event_id, body, headers, valid, mode, int(signed_at) if signed_at else None))
        return mode if valid else FAIL  # an unverifiable request is refused, never processed

    def _answer(self, handler: BaseHTTPRequestHandler, mode: str) -> None:
        handler.close_connection = True
        if mode == RESET:
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.connection.close()
            return
        if mode == BLACKHOLE:
            self._released.wait(self.hold_seconds)
            return
        if mode == SLOW:
            self._released.wait(self.slow_seconds)
        handler.send_response(503 if mode == FAIL else 204)
        handler.send_header("Content-Length", "0")
        handler.end_headers()


def _id_of(body: bytes) -> str | None:
    try:
        value = json.loads(body).get("id")
    except (ValueError, AttributeError):
        return None
    return str(value) if value is not None else None
