"""Callback attempts: the signature, the owner's receiver, and the backoff the queue's visibility carries out."""

from __future__ import annotations

import hashlib
import hmac
import json

from sendledger.domain.callbacks import SigningKeys, signature, verify
from sendledger.domain.caller_settings import CallerSettings
from sendledger.domain.callers import CallerId
from sendledger.usecases.callbacks import CallbackPolicy, Delivery, Receivers, deliver_callback
from tests.support.fakes import FakeClock
from tests.unit.fakes.callbacks import FakeResolver, FakeSecrets, RecordingEndpoint, Retries
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

OWNER = CallerId("0123456789abcdef01234567")
URL = "https://hooks.example.com/x"
PUBLIC = "93.184.215.14"


def bus_event(owner: str | None = OWNER, event_id: str = "abc") -> str:
    detail = {
        "event_id": event_id,
        "message_id": "msg_1",
        "state": "bounced",
        "occurred_at": "2026-01-01T00:00:00.000Z",
    }
    if owner is not None:
        detail["caller_id"] = owner
    return json.dumps(
        {
            "version": "0",
            "id": "eb-1",
            "detail-type": "sendledger.message.state-changed",
            "source": "sendledger",
            "time": "2026-01-01T00:00:00Z",
            "detail": detail,
        }
    )


def receivers(clock: FakeClock, answers: list[int | None] | None = None, secret: str = "s3cret") -> Receivers:
    store = FakeCallerSettings(LedgerState(), clock)
    store.put(CallerSettings(OWNER, URL))
    secrets = FakeSecrets({OWNER: SigningKeys(secret)})
    return Receivers(
        store, secrets, FakeResolver().answer("hooks.example.com", PUBLIC), RecordingEndpoint(answers or [])
    )


def attempts(answers, max_attempts=5, base=60):
    clock, retries = FakeClock(), Retries()
    wired = receivers(clock, list(answers))
    policy = CallbackPolicy(base, max_attempts, 10)
    results = []
    for attempt in range(1, len(answers) + 1):
        results.append(
            deliver_callback(bus_event(), attempt, "rh", policy=policy, receivers=wired, retries=retries, clock=clock)
        )
        clock.advance(results[-1].retry_in_seconds or 0)
    assert isinstance(wired.endpoint, RecordingEndpoint)
    return results, wired.endpoint, retries, clock


def test_failed_attempts_back_off_exponentially_then_go_to_the_dlq():
    results, endpoint, retries, _ = attempts([500, None, 503, 429, 500], max_attempts=5, base=60)
    assert [r.outcome for r in results] == [Delivery.RETRYING] * 4 + [Delivery.EXHAUSTED]
    # 60, 120, 240, 480 s between the five attempts: 15 minutes, then straight to the redrive
    assert retries.delays == [60, 120, 240, 480, 0]
    assert len({post.body for post in endpoint.posts}) == 1  # the same body every time


def test_a_2xx_answer_ends_the_retries_and_each_attempt_is_signed_at_its_own_time():
    results, endpoint, retries, clock = attempts([500, 204], base=1)
    assert [r.outcome for r in results] == [Delivery.RETRYING, Delivery.DELIVERED]
    assert retries.delays == [1]
    first, second = endpoint.posts
    assert first.headers["Sendledger-Event-Id"] == second.headers["Sendledger-Event-Id"] == "abc"
    assert first.headers["Sendledger-Signature"] != second.headers["Sendledger-Signature"]  # t moved by the backoff
    assert (second.url, second.address) == (URL, PUBLIC)
    t = int(clock.now().timestamp())
    mac = hmac.new(b"s3cret", f"{t}.".encode() + second.body, hashlib.sha256).hexdigest()
    assert second.headers["Sendledger-Signature"] == f"t={t},v1={mac}"
    assert json.loads(second.body) == {
        "id": "abc",
        "type": "sendledger.message.state-changed",
        "created_at": "2026-01-01T00:00:00.000Z",
        "data": json.loads(bus_event())["detail"],
    }


def test_an_unreadable_queue_message_is_not_posted():
    clock, retries = FakeClock(), Retries()
    wired = receivers(clock)
    policy = CallbackPolicy(1, 3, 10)
    result = deliver_callback("{not json", 1, "rh", policy=policy, receivers=wired, retries=retries, clock=clock)
    assert result.outcome is Delivery.MALFORMED and wired.endpoint.posts == [] and retries.delays == [0]  # type: ignore[attr-defined]


def test_nobodys_event_and_an_owner_without_a_url_are_acknowledged_without_a_post():
    clock, retries = FakeClock(), Retries()
    wired = receivers(clock)
    policy = CallbackPolicy(1, 3, 10)
    suppression = deliver_callback(
        bus_event(owner=None), 1, "rh", policy=policy, receivers=wired, retries=retries, clock=clock
    )
    stranger = deliver_callback(
        bus_event(owner="f" * 24), 1, "rh", policy=policy, receivers=wired, retries=retries, clock=clock
    )
    assert suppression.outcome is stranger.outcome is Delivery.NO_RECEIVER
    assert wired.endpoint.posts == [] and retries.delays == []  # type: ignore[attr-defined]


def test_verify_refuses_a_changed_body_a_wrong_secret_and_an_old_timestamp():
    body = b'{"id":"x"}'
    header = signature(["k"], 1000, body)
    assert verify("k", header, body, now_unix=1000)
    assert not verify("k", header, body + b" ", now_unix=1000)
    assert not verify("other", header, body, now_unix=1000)
    assert not verify("k", header, body, now_unix=1000 + 301)
    assert not verify("k", header.replace("t=1000", "t=1000,t=1001"), body, now_unix=1000)
    assert not verify("k", "v1=" + header.split("v1=")[1], body, now_unix=1000)
