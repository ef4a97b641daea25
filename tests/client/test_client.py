"""The client's retry and idempotency behaviour against a scripted transport, with a fake clock."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.session import Session
from sendledger_client import DeadlineExceeded, ProblemError, Request, Response, SendledgerClient, Signer
from sendledger_client.transport import is_local, region_of, transport_for


def answer(status: int, body: Any = None, **headers: str) -> Response:
    text = body if isinstance(body, str) else (json.dumps(body) if body is not None else "")
    return Response(status, {k.replace("_", "-").lower(): v for k, v in headers.items()}, text.encode())


@dataclass
class Scripted:
    """Answers in order; keeps every request it was sent."""

    answers: list[Response]
    sent: list[Request] = field(default_factory=list)

    def send(self, request: Request) -> Response:
        self.sent.append(request)
        return self.answers.pop(0)


@dataclass
class Time:
    now: float = 1000.0
    slept: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def client(answers: list[Response], deadline: float = 30.0) -> tuple[SendledgerClient, Scripted, Time]:
    transport, time = Scripted(answers), Time()
    keys = iter(f"key-{n}" for n in range(100))
    made = SendledgerClient(
        "http://127.0.0.1:8080",
        transport,
        deadline_seconds=deadline,
        clock=time.clock,
        sleep=time.sleep,
        new_key=lambda: next(keys),
    )
    return made, transport, time


ACCEPTED = {"message_id": "msg_1", "state": "accepted"}
IN_FLIGHT = {"type": "https://sendledger.dev/problems/idempotency-key-in-flight", "title": "Conflict", "detail": "x"}
UNAVAILABLE = {"type": "https://sendledger.dev/problems/dependency-unavailable", "title": "Service Unavailable"}


def test_a_send_is_retried_with_the_same_key_after_retry_after():
    made, transport, time = client(
        [answer(503, UNAVAILABLE, retry_after="2"), answer(409, IN_FLIGHT, retry_after="3"), answer(202, ACCEPTED)]
    )
    view = made.send("email", "a@example.com", "alert", params={"summary": "s"})
    assert view == ACCEPTED
    keys = [request.headers["Idempotency-Key"] for request in transport.sent]
    assert keys == ["key-0", "key-0", "key-0"], "one key per logical call, reused on its retries"
    assert json.loads(transport.sent[0].body or b"")["template"] == {"id": "alert", "version": "1"}
    assert time.slept == [2.0, 3.0]


def test_two_logical_calls_get_two_keys():
    made, transport, _ = client([answer(202, ACCEPTED), answer(202, {**ACCEPTED, "message_id": "msg_2"})])
    made.send("email", "a@example.com", "alert")
    made.send("email", "a@example.com", "alert")
    assert [r.headers["Idempotency-Key"] for r in transport.sent] == ["key-0", "key-1"]


def test_an_event_id_send_carries_no_key_unless_given():
    made, transport, _ = client([answer(202, ACCEPTED), answer(202, ACCEPTED)])
    made.send("email", "a@example.com", "alert", event_id="evt-1")
    made.send("email", "a@example.com", "alert", event_id="evt-1", idempotency_key="mine")
    assert "Idempotency-Key" not in transport.sent[0].headers
    assert transport.sent[1].headers["Idempotency-Key"] == "mine"


def test_retrying_stops_at_the_callers_deadline():
    made, transport, time = client([answer(503, UNAVAILABLE, retry_after="4")] * 3, deadline=10)
    with pytest.raises(DeadlineExceeded) as raised:
        made.send("email", "a@example.com", "alert")
    assert raised.value.last_status == 503
    assert time.slept == [4.0, 4.0] and len(transport.sent) == 3  # a third wait would pass 10 s


def test_a_pending_send_is_looked_at_again_until_it_moves_on():
    pending = {"message_id": "msg_1", "state": "pending", "retry_after_seconds": 5}
    made, transport, time = client([answer(202, pending, retry_after="5"), answer(200, pending), answer(200, ACCEPTED)])
    assert made.send("email", "a@example.com", "alert") == ACCEPTED
    assert [(r.method, urlsplit(r.url).path) for r in transport.sent] == [
        ("POST", "/v1/messages"),
        ("GET", "/v1/messages/msg_1"),
        ("GET", "/v1/messages/msg_1"),
    ]
    assert time.slept == [5.0, 5.0]


def test_a_problem_is_raised_with_its_title_and_detail_without_retrying():
    problem = {"type": "t", "title": "Bad Request", "status": 400, "detail": "to: invalid", "errors": [{"field": "to"}]}
    made, transport, _ = client([answer(400, problem)])
    with pytest.raises(ProblemError) as raised:
        made.send("email", "nope", "alert")
    assert (raised.value.status, raised.value.title, raised.value.detail) == (400, "Bad Request", "to: invalid")
    assert raised.value.errors == [{"field": "to"}] and len(transport.sent) == 1


def test_export_follows_every_next_link_and_yields_each_line_once():
    def page(ids: list[str], cursor: str | None) -> Response:
        body = "".join(json.dumps({"message_id": i}) + "\n" for i in ids)
        headers = {"link": f'<evidence?since=s&until=u&cursor={cursor}>; rel="next"'} if cursor else {}
        return Response(200, {"content-type": "application/x-ndjson", **headers}, body.encode())

    made, transport, _ = client(
        [page(["m1", "m2"], "c1"), answer(503, UNAVAILABLE, retry_after="1"), page(["m3"], None)]
    )
    made.endpoint = "http://127.0.0.1:8080/prod"
    assert [v["message_id"] for v in made.export("s", "u", limit=2)] == ["m1", "m2", "m3"]
    first, retried, second = (urlsplit(r.url) for r in transport.sent)
    assert first.path == "/prod/v1/evidence" and parse_qs(first.query) == {
        "since": ["s"],
        "until": ["u"],
        "limit": ["2"],
    }
    assert second.path == "/prod/v1/evidence" and parse_qs(second.query)["cursor"] == ["c1"]
    assert retried == second


def test_local_endpoints_are_unsigned_and_others_signed_for_execute_api():
    assert is_local("http://127.0.0.1:8080") and is_local("http://localhost:9") and not is_local("https://x.example")
    assert region_of("https://abc.execute-api.eu-west-1.amazonaws.com/prod") == "eu-west-1"
    assert transport_for("http://127.0.0.1:8080").signer is None  # type: ignore[attr-defined]
    session = Session()
    session.get_credentials = lambda: Credentials("AKIDEXAMPLE", "secret")  # type: ignore[method-assign]
    request = AWSRequest(method="GET", url="https://abc.execute-api.eu-west-1.amazonaws.com/prod/healthz")
    Signer("eu-west-1", session=session).sign(request)
    authorization = request.headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in authorization and "secret" not in authorization


def test_query_values_are_percent_encoded_as_rfc_3986_says():
    """A space is %20, never "+": API Gateway signs the canonical query from decoded values, so a
    form-encoded "+" would no longer match the client's signature once deployed."""
    made, transport, _ = client([answer(200, {"recipient": "a"}), answer(200, ACCEPTED)])
    made.unsuppress("bob+x@example.com", "confirmed by phone + 50% & more #1 é")
    made.find(idempotency_key="my key 1")
    lift, find = (urlsplit(request.url) for request in transport.sent)
    assert lift.path == "/v1/admin/suppressions/bob%2Bx%40example.com"
    assert lift.query == "reason=confirmed%20by%20phone%20%2B%2050%25%20%26%20more%20%231%20%C3%A9"
    assert find.query == "idempotency_key=my%20key%201"


@pytest.mark.parametrize("endpoint", ["127.0.0.1:8080", "notaurl", "ftp://example.com", "https://"])
def test_an_endpoint_that_is_not_an_http_url_is_refused_naming_it(endpoint: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(endpoint))):
        SendledgerClient(endpoint, Scripted([]))
    with pytest.raises(ValueError, match=re.escape(repr(endpoint))):
        SendledgerClient.connect(endpoint)
