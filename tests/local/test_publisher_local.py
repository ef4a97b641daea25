"""`python -m local` with CALLBACK_URL: a bounce's events on GET /local/events, signed callbacks
to a receiver that answers 500 to each event's first attempt. CALLBACK_URL is the local callers'
receiver (registered at start as their caller setting): the message's events reach it, the
suppression change (every caller's recipient, nobody's event) does not."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from sendledger import names
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS, wait_until
from tests.local.test_local_stack_http import running_stack

SECRET = "local-callback-secret"
# Retries after 1, 2 s: a second attempt arrives within this, on a loaded machine too.
CALLBACK_BUDGET_SECONDS = 60.0


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                first = not any(
                    h["sendledger-event-id"] == headers["sendledger-event-id"] for h, _ in receiver.requests
                )
                receiver.requests.append((headers, body))
                self.send_response(500 if first else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def base_url(receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {
        names.ENV_POLL_INTERVAL_SECONDS: "3600",
        names.ENV_CALLBACK_URL: f"http://127.0.0.1:{receiver.server_address[1]}/hooks",
    }
    with running_stack(tmp_path_factory, "local-status", settings) as running:
        assert f"CALLBACK_SECRET={SECRET}" in running.log_path.read_text()
        yield running.url


def test_a_bounce_reaches_the_bus_and_the_receiver_signed_and_retried(base_url: str, receiver: Receiver) -> None:
    payload = {
        "channel": "email",
        "to": "bounce@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "x"},
    }
    headers = {"Idempotency-Key": f"bounce-{uuid.uuid4()}"}
    sent = requests.post(f"{base_url}/v1/messages", json=payload, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)
    assert sent.status_code == 202, sent.text
    message_id = sent.json()["message_id"]
    assert requests.post(f"{base_url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200

    def events() -> list[dict]:
        return requests.get(f"{base_url}/local/events", timeout=REQUEST_TIMEOUT_SECONDS).json()

    seen = wait_until(
        events,
        CALLBACK_BUDGET_SECONDS,
        "the bounce and the suppression on GET /local/events",
        done=lambda found: (
            any(e["detail"].get("state") == "bounced" for e in found)
            and any(e["detail-type"] == "sendledger.suppression.changed" for e in found)
        ),
    )
    ours = [e for e in seen if e["detail"].get("message_id") == message_id]
    assert [e["detail"]["state"] for e in ours][-1] == "bounced"
    assert all(set(e) == {"id", "source", "detail-type", "time", "detail"} for e in seen)
    ids = {e["detail"]["event_id"] for e in ours}
    nobodys = {e["detail"]["event_id"] for e in seen if e["detail-type"] == "sendledger.suppression.changed"}

    def attempts() -> dict[str, int]:
        counts = {event_id: 0 for event_id in ids}
        for got, _ in list(receiver.requests):
            if got["sendledger-event-id"] in counts:
                counts[got["sendledger-event-id"]] += 1
        return counts

    # Each event's first POST got 500: every one of them came again (same id) and was accepted.
    wait_until(attempts, CALLBACK_BUDGET_SECONDS, "every event retried", done=lambda c: min(c.values()) >= 2)
    assert not nobodys & {got["sendledger-event-id"] for got, _ in receiver.requests}
    for got, body in receiver.requests:
        parts = dict(p.split("=", 1) for p in got["sendledger-signature"].split(","))
        mac = hmac.new(SECRET.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(mac, parts["v1"])
        assert json.loads(body)["id"] == got["sendledger-event-id"]
