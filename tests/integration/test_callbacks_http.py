"""Signed callbacks to a real local HTTP receiver that fails its first attempts."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest

from tests.support.status_out import status_out_harness

SECRET = "local-callback-secret"  # the local default, as a receiver would configure it


class Receiver:
    """Answers 500 to the first `failures` POSTs, then 204; keeps every request it got."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(500 if len(receiver.requests) <= receiver.failures else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/sendledger"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def verified(headers: dict[str, str], body: bytes) -> bool:
    """What the README tells a receiver to do, with the standard library only."""
    parts = dict(p.split("=", 1) for p in headers["sendledger-signature"].split(","))
    expected = hmac.new(SECRET.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


def pump_for(services, clock, receiver, max_attempts):
    # Retry base 0: each attempt is visible again at once (moto times visibility by the real
    # clock); the delays themselves are asserted in tests/unit/test_callbacks_backoff.py.
    settings = services.settings.model_copy(
        update={"callback_url": receiver.url, "callback_retry_base_seconds": 0, "callback_max_attempts": max_attempts}
    )
    return status_out_harness(settings, clock=clock, with_callbacks=True)[0]


def admin_suppress(api):
    assert api("PUT", "/v1/admin/suppressions/gina%40example.com", {"reason": "asked"})[0] == 200


def test_a_failing_receiver_gets_the_same_signed_event_until_it_answers_2xx(api, clock):
    with Receiver(failures=2) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=5)
        admin_suppress(api)
        pump.pump()
    assert len(receiver.requests) == 3
    (headers, body), *_ = receiver.requests
    payload = json.loads(body)
    assert set(payload) == {"id", "type", "created_at", "data"}
    assert payload["type"] == "sendledger.suppression.changed"
    assert payload["id"] == payload["data"]["event_id"] == headers["sendledger-event-id"]
    assert payload["data"]["recipient"] == "gina@example.com" and payload["data"]["suppressed"] is True
    for headers, again in receiver.requests:
        assert again == body and headers["sendledger-event-id"] == payload["id"]  # one id, every attempt
        assert verified(headers, again)
        assert headers["sendledger-signature"].startswith(f"t={int(clock.now().timestamp())},v1=")
    assert not verified({"sendledger-signature": headers["sendledger-signature"]}, body + b" ")
    assert _depth(pump.resources.callback_queue_url) == 0 == _depth(pump.resources.callback_dlq_url)


def test_a_receiver_that_never_answers_2xx_leaves_the_event_in_the_dlq(api, clock):
    with Receiver(failures=10**6) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        admin_suppress(api)
        pump.pump()
    assert len(receiver.requests) == 3
    dlq = boto3.client("sqs").receive_message(QueueUrl=pump.resources.callback_dlq_url).get("Messages", [])
    assert [json.loads(m["Body"])["detail"]["event_id"] for m in dlq] == [json.loads(receiver.requests[0][1])["id"]]


def test_a_receiver_that_is_down_does_not_block_publishing(api, clock):
    with Receiver(failures=0) as receiver:
        url = receiver.url
    settings = api.services.settings.model_copy(update={"callback_url": url, "callback_retry_base_seconds": 60})
    pump = status_out_harness(settings, clock=clock, with_callbacks=True)[0]
    admin_suppress(api)
    report = pump.pump()
    assert report["records"] >= 1 and len(pump.events) == 1  # on the bus despite the refused POST
    assert report["callbacks"] == 0 and _depth(pump.resources.callback_queue_url) == 1


def _depth(url: str) -> int:
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


@pytest.fixture(autouse=True)
def _no_cached_queue_urls():
    from sendledger.adapters.sqs_visibility import SqsVisibility

    SqsVisibility.of_queue.cache_clear()
    yield
    SqsVisibility.of_queue.cache_clear()
