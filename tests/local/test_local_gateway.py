"""The API Gateway translation, with a fake handler (no AWS involved)."""

from __future__ import annotations

import base64
import http.client
import json
import logging
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.apigateway import build_event, response_parts
from local.constants import ACCOUNT_ID, LOCAL_PRINCIPAL, POLLER_SCHEDULE_RULE, REGION
from local.gateway import Gateway
from local.lambda_context import DEFAULT_TIMEOUT_SECONDS, LambdaContext, context_factory
from local.scheduler import Scheduler, scheduled_event
from sendledger import names
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS, wait_until

PRINCIPAL = LOCAL_PRINCIPAL


class FakeHandler:
    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], Any]] = []
        self.response: dict[str, Any] = {
            "statusCode": 202,
            "headers": {"Content-Type": "application/json", "Retry-After": "5"},
            "multiValueHeaders": {"Set-Cookie": ["a=1", "b=2"]},
            "body": json.dumps({"ok": True}),
            "isBase64Encoded": False,
        }

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.calls.append((event, context))
        return self.response


@pytest.fixture
def fake() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
def gateway(fake: FakeHandler) -> Iterator[Gateway]:
    outbox = [{"channel": "sms", "to": "+12065550100", "subject": None}]
    polls: list[int] = []

    def poll() -> dict[str, Any]:
        polls.append(1)
        return {"flush": {}, "poller": {"polled": len(polls)}}

    gw = Gateway(
        fake,
        principal=PRINCIPAL,
        outbox=lambda: outbox,
        poll=poll,
        port=0,
        clock_ms=lambda: 1795946400000,
    )
    gw.start()
    yield gw
    gw.stop()


def test_request_becomes_the_http_apis_payload_1_0_event(gateway: Gateway, fake: FakeHandler) -> None:
    response = requests.post(
        f"{gateway.url}/v1/suppressions/a%2Bb%40example.com?reason=hello%20world&x=1&x=2&p=a+b&q=a%2Bb",
        data=json.dumps({"to": "bob@example.com"}),
        headers={"Idempotency-Key": "key-1", "Content-Type": "application/json"},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert response.status_code == 202
    (event, context), *_ = fake.calls
    assert (event["version"], event["httpMethod"]) == ("1.0", "POST")
    assert event["path"] == "/v1/suppressions/a%2Bb%40example.com"  # encoding left intact
    assert event["resource"] == event["path"]
    assert event["pathParameters"] is None
    # Form-decoded as API Gateway decodes them: "+" is a space, "%2B" a plus; an HTTP API joins a
    # repeated name's values with commas in the single-value map and lower-cases header names.
    assert event["queryStringParameters"] == {"reason": "hello world", "x": "1,2", "p": "a b", "q": "a+b"}
    assert event["multiValueQueryStringParameters"]["x"] == ["1", "2"]
    assert event["headers"]["idempotency-key"] == "key-1"
    assert event["multiValueHeaders"]["idempotency-key"] == ["key-1"]
    assert json.loads(event["body"]) == {"to": "bob@example.com"}
    assert event["isBase64Encoded"] is False
    ctx = event["requestContext"]
    assert ctx["stage"] == "local"
    assert ctx["routeKey"] == "POST /v1/suppressions/a%2Bb%40example.com"  # the fake routes nothing
    assert ctx["identity"]["userArn"] == PRINCIPAL
    assert ctx["identity"]["caller"] == PRINCIPAL
    assert ctx["requestTimeEpoch"] == 1795946400000
    assert ctx["requestId"]
    assert isinstance(context, LambdaContext)
    assert 0 < context.get_remaining_time_in_millis() <= 29_000
    assert context.invoked_function_arn.startswith(f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:")


def test_response_translation(gateway: Gateway) -> None:
    response = requests.get(f"{gateway.url}/v1/messages/m1", timeout=REQUEST_TIMEOUT_SECONDS)
    assert response.status_code == 202
    assert response.json() == {"ok": True}
    assert response.headers["Retry-After"] == "5"
    assert response.headers["Content-Type"] == "application/json"
    assert response.raw.headers.getlist("Set-Cookie") == ["a=1", "b=2"]


def test_base64_in_both_directions(gateway: Gateway, fake: FakeHandler) -> None:
    fake.response = {
        "statusCode": 200,
        "headers": {"Content-Type": "application/octet-stream"},
        "body": base64.b64encode(b"\xff\x00binary").decode(),
        "isBase64Encoded": True,
    }
    response = requests.put(f"{gateway.url}/upload", data=b"\xff\xfe\x00", timeout=REQUEST_TIMEOUT_SECONDS)
    assert response.content == b"\xff\x00binary"
    event = fake.calls[-1][0]
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\xff\xfe\x00"


def test_empty_request_has_no_body_or_query(fake: FakeHandler) -> None:
    event = build_event(method="GET", target="/healthz", headers=[], body=b"", principal="p")
    assert event["body"] is None
    assert event["queryStringParameters"] is None
    assert event["multiValueQueryStringParameters"] is None
    assert event["headers"] is None


def test_handler_crash_is_a_502(gateway: Gateway, fake: FakeHandler) -> None:
    def boom(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    gateway.api.handler = boom
    response = requests.get(f"{gateway.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS)
    assert response.status_code == 502
    assert response.json() == {"message": "Internal server error"}


def test_local_routes_are_served_by_the_gateway(gateway: Gateway, fake: FakeHandler) -> None:
    outbox = requests.get(f"{gateway.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS)
    assert outbox.status_code == 200
    assert outbox.json() == [{"channel": "sms", "to": "+12065550100", "subject": None}]
    poll = requests.post(f"{gateway.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
    assert poll.status_code == 200
    assert poll.json() == {"flush": {}, "poller": {"polled": 1}}
    assert fake.calls == []


def test_a_failing_poll_cycle_is_a_503_with_retry_after(gateway: Gateway, fake: FakeHandler) -> None:
    def poll() -> dict[str, Any]:
        raise ConnectionError("moto went away")

    gateway.local.poll = poll
    response = requests.post(f"{gateway.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert response.headers["Content-Type"] == "application/problem+json"
    assert "ConnectionError" in response.json()["detail"]


class ObservedLock:
    """The gateway's own invoke lock, counting the threads blocked on it."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.waiting = 0
        self._count = threading.Lock()

    def __enter__(self) -> ObservedLock:
        with self._count:
            self.waiting += 1
        self.lock.acquire()
        with self._count:
            self.waiting -= 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def test_invocations_are_serialized(fake: FakeHandler) -> None:
    callers = 4
    active: list[int] = []
    overlap: list[int] = []
    entered: list[int] = []
    failures: list[str] = []

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        active.append(1)
        entered.append(1)
        if len(active) > 1:
            overlap.append(1)
        if len(entered) == 1:
            # The first invocation holds on until every other request is queued behind it (or,
            # were invocations not serialized, one ran beside it), within its own Lambda timeout.
            try:
                wait_until(
                    lambda: {"queued": lock.waiting, "running beside it": len(overlap)},
                    context.get_remaining_time_in_millis() / 1000,
                    f"the other {callers - 1} requests to queue on the invoke lock",
                    done=lambda seen: seen["queued"] == callers - 1 or seen["running beside it"] > 0,
                )
            except pytest.fail.Exception as failure:  # raised in the gateway's thread: report it from the test's
                failures.append(str(failure))
        active.pop()
        return {"statusCode": 200, "body": ""}

    gw = Gateway(slow, principal=PRINCIPAL, port=0)
    lock = ObservedLock(gw.api.invoke_lock)
    gw.api.invoke_lock = lock
    gw.start()
    try:
        # each request may wait for every invocation before it, each bounded by its Lambda timeout
        timeout = callers * DEFAULT_TIMEOUT_SECONDS
        threads = [
            threading.Thread(target=requests.get, args=(f"{gw.url}/x",), kwargs={"timeout": timeout})
            for _ in range(callers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gw.stop()
    assert failures == []
    assert len(entered) == callers
    assert overlap == []


def test_response_parts_prefers_multi_value_headers() -> None:
    status, lines, body = response_parts(
        {
            "statusCode": 409,
            "headers": {"Retry-After": "1", "X-A": "single"},
            "multiValueHeaders": {"x-a": ["m1", "m2"]},
            "body": "{}",
        }
    )
    assert status == 409
    assert sorted(lines) == [("Retry-After", "1"), ("x-a", "m1"), ("x-a", "m2")]
    assert body == b"{}"


def test_context_counts_down_with_injected_time() -> None:
    now = [100.0]
    make = context_factory("fn", timeout_seconds=29, monotonic=lambda: now[0])
    context = make()
    assert context.get_remaining_time_in_millis() == 29_000
    now[0] += 28.5
    assert context.get_remaining_time_in_millis() == 500
    now[0] += 5
    assert context.get_remaining_time_in_millis() == 0
    assert make().aws_request_id != context.aws_request_id


def test_scheduled_event_shape() -> None:
    from datetime import UTC, datetime

    event = scheduled_event(now=datetime(2026, 11, 29, 10, 0, tzinfo=UTC))
    assert event["detail-type"] == "Scheduled Event"
    assert event["source"] == "aws.events"
    assert event["time"] == "2026-11-29T10:00:00Z"
    assert event["resources"] == [f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{POLLER_SCHEDULE_RULE}"]
    assert event["detail"] == {}
    assert set(event) == {
        "version",
        "id",
        "detail-type",
        "source",
        "account",
        "time",
        "region",
        "resources",
        "detail",
    }


def test_scheduler_survives_failing_ticks() -> None:
    results = iter([RuntimeError("first"), None, RuntimeError("third")])
    waits = iter([False, False, False, True])

    def tick() -> None:
        outcome = next(results)
        if outcome is not None:
            raise outcome

    scheduler = Scheduler(tick, 5, wait=lambda seconds: next(waits))
    scheduler.run()
    assert scheduler.ticks == 3
    assert scheduler.failures == 2


# --- routing: 404 / 405 before the Lambda, for every method ----------------------------------
PROBLEM_KEYS = {"type", "title", "status", "detail"}


@pytest.fixture
def routed(fake: FakeHandler) -> Iterator[Gateway]:
    """The gateway as the local stack runs it: with the API's route table."""
    gw = Gateway(fake, principal=PRINCIPAL, routes=names.API_ROUTES, port=0)
    gw.start()
    yield gw
    gw.stop()


def raw_request(gateway: Gateway, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One request through http.client, which sends any method token as is."""
    host, port = gateway.server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=REQUEST_TIMEOUT_SECONDS)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, {name.lower(): value for name, value in response.getheaders()}, response.read()
    finally:
        connection.close()


def assert_problem(headers: dict[str, str], body: bytes, status: int) -> dict[str, Any]:
    assert headers["content-type"] == "application/problem+json"
    document: dict[str, Any] = json.loads(body)
    assert set(document) == PROBLEM_KEYS
    assert document["status"] == status
    assert document["type"].startswith("https://")
    assert all(isinstance(document[key], str) and document[key] for key in ("type", "title", "detail"))
    return document


KNOWN_PATHS = {  # path: its Allow header
    "/v1/admin/suppressions/a%40example.com": "DELETE, GET, HEAD, PUT",
    "/healthz": "GET, HEAD",  # HEAD is GET without the body, on every GET route
    "/local/outbox": "GET, HEAD",
    "/": "GET, HEAD",  # the redirect to the console
    "/local/console": "GET, HEAD",
}
UNSUPPORTED = [
    (method, path, allow)
    for path, allow in KNOWN_PATHS.items()
    for method in ("TRACE", "PATCH", "FOO", "CONNECT", "OPTIONS", "HEAD", "POST", "get")
    if method not in allow.split(", ")
]


@pytest.mark.parametrize(("method", "path", "allow"), UNSUPPORTED)
def test_unsupported_method_on_a_known_path_is_405(
    routed: Gateway, fake: FakeHandler, method: str, path: str, allow: str
) -> None:
    status, headers, body = raw_request(routed, method, path)
    assert status == 405
    assert headers["allow"] == allow
    if method == "HEAD":
        assert body == b""
        assert headers["content-type"] == "application/problem+json"
    else:
        assert assert_problem(headers, body, 405)["title"] == "Method Not Allowed"
    assert fake.calls == []


@pytest.mark.parametrize("method", ["TRACE", "PATCH", "FOO", "GET", "POST", "OPTIONS"])
@pytest.mark.parametrize(
    "path", ["/v1/nowhere", "/index.html", "/v1/messages/m1/extra", "/healthz/", "*", "/local/console/a/b"]
)
def test_unknown_path_is_404(routed: Gateway, fake: FakeHandler, method: str, path: str) -> None:
    status, headers, body = raw_request(routed, method, path)
    assert status == 404
    assert "allow" not in headers
    assert assert_problem(headers, body, 404)["title"] == "Not Found"
    assert fake.calls == []


def test_supported_methods_reach_the_handler(routed: Gateway, fake: FakeHandler) -> None:
    for method, path in [("GET", "/v1/suppressions/a%2Fb%40example.com"), ("DELETE", "/v1/admin/suppressions/x")]:
        status, _, _ = raw_request(routed, method, path)
        assert status == 202
    assert [(event["httpMethod"], event["path"]) for event, _ in fake.calls] == [
        ("GET", "/v1/suppressions/a%2Fb%40example.com"),
        ("DELETE", "/v1/admin/suppressions/x"),
    ]
    # The matched route as the HTTP API names it, and its parameter decoded.
    first = fake.calls[0][0]
    assert first["requestContext"]["routeKey"] == "GET /v1/suppressions/{recipient}"
    assert first["resource"] == "/v1/suppressions/{recipient}"
    assert first["pathParameters"] == {"recipient": "a/b@example.com"}


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /healthz HTTP/2.0\r\n\r\n", 400),  # http.server alone answers 505
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
        (b"GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404),
        (b"GET http://[/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400),
        (b"GET /healthz HTTP/x.y\r\n\r\n", 400),
        (b"NONSENSE\r\n\r\n", 400),
    ],
)
def test_malformed_requests_get_a_4xx_problem(routed: Gateway, request_bytes: bytes, status: int) -> None:
    host, port = routed.server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=REQUEST_TIMEOUT_SECONDS) as connection:
        connection.sendall(request_bytes)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    assert int(status_line.split()[1]) == status
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    assert headers["connection"] == "close"
    assert_problem(headers, body, status)


def test_a_client_gone_before_its_answer_leaves_no_traceback(
    fake: FakeHandler, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A curl interrupted mid-request: the answer's write fails, and that is the client's doing."""
    gone = threading.Event()
    answered = threading.Event()

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        gone.wait(REQUEST_TIMEOUT_SECONDS)
        return {**fake.response, "body": "x" * 100_000}  # more than a socket buffer: the write must fail

    gw = Gateway(slow, principal=PRINCIPAL, port=0)
    real_handle = gw.handle

    def handle(*args: Any) -> Any:
        try:
            return real_handle(*args)
        finally:
            answered.set()

    gw.handle = handle  # type: ignore[method-assign]
    gw.start()
    try:
        host, port = gw.server.server_address[:2]
        client = socket.create_connection((str(host), port), timeout=REQUEST_TIMEOUT_SECONDS)
        client.sendall(b"GET /v1/messages/m1 HTTP/1.1\r\nHost: x\r\n\r\n")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # with a zero linger: a reset, as a killed client leaves it
        gone.set()
        assert answered.wait(REQUEST_TIMEOUT_SECONDS)
        # the gateway goes on serving
        assert requests.get(f"{gw.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
    finally:
        gw.stop()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
