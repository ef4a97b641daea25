"""Signed callbacks to a real local HTTP receiver that fails its first attempts."""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time

import boto3
import pytest

from local.status_out import sqs_record
from sendledger.adapters.callbacks_http import UrllibEndpoint
from sendledger.domain.caller_settings import CallbackUrl, parse_callback_url
from tests.support.fakes import CALLER, FakeLambdaContext
from tests.support.receiver import FAIL, Receiver, always, first, signature_valid
from tests.support.status_out import register_receiver, status_out_harness

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def local_url(text: str) -> CallbackUrl:
    parsed = parse_callback_url(text, allow_http=True)
    assert isinstance(parsed, CallbackUrl)
    return parsed


SECRET = "local-callback-secret"  # the local default, as a receiver would configure it


def verified(headers: dict[str, str], body: bytes) -> bool:
    """What docs/status-out.md tells a receiver to do, with the standard library only."""
    return signature_valid(SECRET, headers["sendledger-signature"], body)


def bodies(receiver: Receiver) -> list[tuple[dict[str, str], bytes]]:
    return [(got.headers, got.body) for got in receiver.requests]


def pump_for(services, clock, receiver, max_attempts):
    # Retry base 0: each attempt is visible again at once (moto times visibility by the real
    # clock); the delays themselves are asserted in tests/unit/test_callbacks_backoff.py.
    settings = services.settings.model_copy(
        update={"callback_retry_base_seconds": 0, "callback_max_attempts": max_attempts}
    )
    register_receiver(settings, CALLER, receiver.url, SECRET)
    return status_out_harness(settings, clock=clock, with_callbacks=True)[0]


def send(api, to: str = "gina@example.com") -> str:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": f"k-{to}"})
    assert status == 202
    return str(view["message_id"])


def test_a_failing_receiver_gets_the_same_signed_event_until_it_answers_2xx(api, clock):
    with Receiver(SECRET, first(2, FAIL)) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=5)
        message_id = send(api)
        pump.pump()
    ids = [e["detail"]["event_id"] for e in pump.events]
    assert len(ids) == 2 and len(receiver.requests) == 3 * len(ids)  # sending, accepted: 3 attempts each
    for event_id in ids:
        got = [(h, b) for h, b in bodies(receiver) if h["sendledger-event-id"] == event_id]
        (headers, body), *_ = got
        payload = json.loads(body)
        assert set(payload) == {"id", "type", "created_at", "data"}
        assert payload["type"] == "sendledger.message.state-changed"
        assert payload["id"] == payload["data"]["event_id"] == event_id
        assert payload["data"]["message_id"] == message_id and payload["data"]["caller_id"] == CALLER
        for headers, again in got:
            assert again == body  # one id, one body, every attempt
            assert verified(headers, again)
            assert headers["sendledger-signature"].startswith(f"t={int(clock.now().timestamp())},v1=")
        assert not verified({"sendledger-signature": headers["sendledger-signature"]}, body + b" ")
    assert _depth(pump.resources.callback_queue_url) == 0 == _depth(pump.resources.callback_dlq_url)


def test_a_receiver_that_never_answers_2xx_leaves_the_event_in_the_dlq(api, clock):
    with Receiver(SECRET, always(FAIL)) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        send(api)
        pump.pump()
    assert len(receiver.requests) == 3 * 2
    dlq = boto3.client("sqs").receive_message(QueueUrl=pump.resources.callback_dlq_url, MaxNumberOfMessages=10)
    dead = {json.loads(m["Body"])["detail"]["event_id"] for m in dlq.get("Messages", [])}
    assert dead == {json.loads(got.body)["id"] for got in receiver.requests}


def test_a_suppression_change_is_nobodys_and_is_acknowledged_without_a_post(api, clock):
    with Receiver(SECRET) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        assert api("PUT", "/v1/admin/suppressions/gina%40example.com", {"reason": "asked"})[0] == 200
        report = pump.pump()
    assert [e["detail-type"] for e in pump.events] == ["sendledger.suppression.changed"]
    assert receiver.requests == [] and report["callbacks"] == 1  # deleted from the queue, not posted
    assert _depth(pump.resources.callback_queue_url) == 0 == _depth(pump.resources.callback_dlq_url)


def test_a_receiver_that_is_down_does_not_block_publishing(api, clock):
    with Receiver(SECRET) as receiver:
        url = receiver.url
    settings = api.services.settings.model_copy(update={"callback_retry_base_seconds": 60})
    register_receiver(settings, CALLER, url, SECRET)
    pump = status_out_harness(settings, clock=clock, with_callbacks=True)[0]
    send(api)
    report = pump.pump()
    assert report["records"] >= 1 and len(pump.events) == 2  # on the bus despite the refused POSTs
    assert report["callbacks"] == 0 and _depth(pump.resources.callback_queue_url) == 2


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


def test_a_receiver_that_trickles_its_answer_is_cut_off_at_the_timeout():
    # Given a receiver that accepts and sends its answer one byte every 50 ms: no single read
    # ever waits the timeout, so urllib's per-read timeout alone would wait for all of it (~10 s)
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            for byte in b"HTTP/1.1 204 No Content\r\n" + b"X-Slow: " + b"." * 200 + b"\r\n\r\n":
                if stop.wait(0.05):
                    return
                connection.sendall(bytes([byte]))

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    url = local_url(f"http://127.0.0.1:{server.getsockname()[1]}/hook")
    started = time.monotonic()
    try:
        # When a callback is posted with a 0.3 s timeout
        status = UrllibEndpoint().post(url, [LOOPBACK], b"{}", {"Content-Type": "application/json"}, 0.3)
    finally:
        stop.set()
        server.close()
    # Then the POST ends at the timeout, unanswered: the whole request is bounded, not each read
    assert status is None
    assert time.monotonic() - started < 1.5


def test_a_record_without_time_for_its_post_is_left_for_the_next_receive(api, clock):
    # Given a callback whose POST (10 s) and visibility change (3 s) no longer fit the invocation
    with Receiver(SECRET) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        send(api)
        pump.publish()
        sqs = boto3.client("sqs")
        message = sqs.receive_message(QueueUrl=pump.resources.callback_queue_url, MessageSystemAttributeNames=["All"])[
            "Messages"
        ][0]
        record = sqs_record(message, pump.resources.callback_queue_arn, "us-east-1")
        # When the function has 12 s left
        answer = pump.callbacks({"Records": [record]}, FakeLambdaContext(remaining_ms=12_000))
        # Then the record is not posted and is reported failed (not deleted: it comes back)
        assert receiver.requests == []
        assert answer == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
        # And with 13 s left it is
        answer = pump.callbacks({"Records": [record]}, FakeLambdaContext(remaining_ms=13_000))
        assert len(receiver.requests) == 1 and answer == {"batchItemFailures": []}


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_an_answer_that_is_not_http_is_no_answer():
    # Given a receiver that answers with something that is not an HTTP status line
    server = socket.create_server(("127.0.0.1", 0))

    def garble() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"hello, this is not HTTP\r\n\r\n")

    threading.Thread(target=garble, daemon=True).start()
    try:
        # When a callback is posted to it
        url = local_url(f"http://127.0.0.1:{server.getsockname()[1]}/hook")
        status = UrllibEndpoint().post(url, [LOOPBACK], b"{}", {}, 2)
    finally:
        server.close()
    # Then it counts as no answer (retried with backoff), and nothing is raised, on the POST's
    # own thread either (it has ended: the answer came well within the timeout)
    assert status is None
