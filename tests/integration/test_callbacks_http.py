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
    settings = services.settings.replace({"callback_retry_base_seconds": 0, "callback_max_attempts": max_attempts})
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
    settings = api.services.settings.replace({"callback_retry_base_seconds": 60})
    register_receiver(settings, CALLER, url, SECRET)
    pump = status_out_harness(settings, clock=clock, with_callbacks=True)[0]
    send(api)
    report = pump.pump()
    assert report["records"] >= 1 and len(pump.events) == 2  # on the bus despite the refused POSTs
    # the first refused POST's record is queued again for its second attempt, a minute later;
    # the caller's receiver then rests, and its other record waits with it, unattempted
    queued = _all(pump.resources.callback_queue_url)
    assert sorted(_attempts(m) for m in queued) == [0, 1]


def _all(url: str) -> list[dict]:
    """Every message the queue holds, visible or delayed (moto's backend: nothing received)."""
    from tests.reliability.event_sources import _queue

    return [
        {
            "Body": m.body,
            "MessageAttributes": {k: {"StringValue": v["StringValue"]} for k, v in m.message_attributes.items()},
        }
        for m in _queue(url)._messages
    ]


def _attempts(message: dict) -> int:
    return int(message["MessageAttributes"].get("sendledger-attempts", {}).get("StringValue", 0))


def _depth(url: str) -> int:
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


@pytest.fixture(autouse=True)
def _no_cached_queue_urls():
    from sendledger.adapters.callback_queue import SqsCallbackQueue

    SqsCallbackQueue.of_queue.cache_clear()
    yield
    SqsCallbackQueue.of_queue.cache_clear()


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


def test_a_record_without_time_for_its_post_is_queued_again_keeping_its_attempts(api, clock):
    # Given a callback whose POST (in a batch its caller's share, 1 s) and its requeueing (3 s)
    # no longer fit the invocation
    with Receiver(SECRET) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        send(api)
        pump.publish()
        sqs = boto3.client("sqs")
        message = sqs.receive_message(QueueUrl=pump.resources.callback_queue_url, MessageSystemAttributeNames=["All"])[
            "Messages"
        ][0]
        record = sqs_record(message, pump.resources.callback_queue_arn, "us-east-1")
        # When the function has 3.9 s left
        answer = pump.callbacks({"Records": [record]}, FakeLambdaContext(remaining_ms=3_900))
        # Then the record is not posted; it is queued again with no attempt counted (however
        # often this happens, it reaches the DLQ only after its attempts were made)
        assert receiver.requests == [] and answer == {"batchItemFailures": []}
        [again] = [m for m in _all(pump.resources.callback_queue_url) if m["MessageAttributes"]]
        assert again["Body"] == message["Body"] and _attempts(again) == 0
        # And with 4 s left it is
        answer = pump.callbacks({"Records": [record]}, FakeLambdaContext(remaining_ms=4_000))
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


@pytest.mark.parametrize(
    "envelope",
    [
        {},  # hand-written: just a detail-type and a detail naming the caller
        {"source": "ops.tooling", "account": "123456789012"},
        {"source": "sendledger", "account": "210987654321"},  # another account's
    ],
    ids=["no-envelope", "other-source", "other-account"],
)
def test_a_forged_state_change_put_straight_on_the_callback_queue_is_never_signed_or_posted(api, clock, envelope):
    # Given a caller with a receiver, and a principal that can SendMessage to the callback queue
    with Receiver(SECRET) as receiver:
        pump = pump_for(api.services, clock, receiver, max_attempts=3)
        detail = {
            "event_id": "forged-1",
            "message_id": "msg_forged",
            "state": "delivered",
            "caller_id": CALLER,
            "to": "victim@example.com",
            "occurred_at": "2026-01-01T00:00:00.000Z",
        }
        forged = {"detail-type": "sendledger.message.state-changed", "detail": detail, **envelope}
        boto3.client("sqs").send_message(QueueUrl=pump.resources.callback_queue_url, MessageBody=json.dumps(forged))
        # When the callbacks consume the queue
        pump.pump()
    # Then the caller's receiver got nothing signed, and the forgery waits in the DLQ, marked
    assert receiver.requests == []
    [dead] = _all(pump.resources.callback_dlq_url)
    assert json.loads(dead["Body"]) == forged
    assert dead["MessageAttributes"]["sendledger-reason"]["StringValue"].startswith("foreign: ")
    assert _depth(pump.resources.callback_queue_url) == 0


def test_a_lookup_that_hangs_is_abandoned_at_its_deadline(monkeypatch):
    # Given a system resolver that never answers (a DNS server dropping the queries)
    from sendledger.adapters.callbacks_http import SocketResolver

    released = threading.Event()
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: released.wait(5) and [])
    try:
        started = time.monotonic()
        # When a callback's host is looked up with 50 ms left of its deadline
        found = SocketResolver().addresses("hooks.example.com", 0.05)
        # Then the lookup gives up at the deadline: no address, the attempt fails like a timeout
        assert found == [] and time.monotonic() - started < 1
    finally:
        released.set()
