"""Callback attempts: the signature, the owner's receiver, each record's own backoff, and foreign events refused."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from sendledger.domain.callback_schedule import CircuitBreakers, Queued
from sendledger.domain.callbacks import SigningKeys, signature, verify
from sendledger.domain.caller_settings import CallerSettings
from sendledger.domain.callers import CallerId
from sendledger.usecases.callbacks import CallbackPolicy, Delivery, Receivers, deliver_callback
from tests.support.fakes import FakeClock
from tests.unit.fakes.callbacks import ACCOUNT, FakeCallbackQueue, FakeResolver, FakeSecrets, RecordingEndpoint
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

OWNER = CallerId("0123456789abcdef01234567")
URL = "https://hooks.example.com/x"
PUBLIC = "93.184.215.14"


def bus_event(owner: str | None = OWNER, event_id: str = "abc", **envelope: str) -> str:
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
            "account": ACCOUNT,
            "time": "2026-01-01T00:00:00Z",
            "detail": detail,
            **envelope,
        }
    )


def receivers(clock: FakeClock, answers: list[int | None] | None = None, secret: str = "s3cret") -> Receivers:
    store = FakeCallerSettings(LedgerState(), clock)
    store.put(CallerSettings(OWNER, URL))
    secrets = FakeSecrets({OWNER: SigningKeys(secret)})
    return Receivers(
        store,
        secrets,
        FakeResolver().answer("hooks.example.com", PUBLIC),
        RecordingEndpoint(answers or []),
        CircuitBreakers(),
    )


def deliver(queued: Queued | str, wired: Receivers, queue: FakeCallbackQueue, clock: FakeClock, policy=None):
    record = Queued(queued) if isinstance(queued, str) else queued
    policy = policy or CallbackPolicy(1, 3, 10)
    return deliver_callback(record, account_id=ACCOUNT, policy=policy, receivers=wired, queue=queue, clock=clock)


def attempts(answers, max_attempts=5, base=60):
    clock, retries = FakeClock(), FakeCallbackQueue()
    wired = receivers(clock, list(answers))
    policy = CallbackPolicy(base, max_attempts, 10)
    results = []
    record = Queued(bus_event())
    for _ in answers:
        results.append(deliver(record, wired, retries, clock, policy))
        clock.advance(results[-1].retry_in_seconds or 0)
        record = retries.next_record() if retries.put_backs else record
    assert isinstance(wired.endpoint, RecordingEndpoint)
    return results, wired.endpoint, retries, clock


def test_failed_attempts_back_off_exponentially_then_go_to_the_dlq():
    results, endpoint, retries, _ = attempts([500, None, 503, 429, 500], max_attempts=5, base=60)
    assert [r.outcome for r in results] == [Delivery.RETRYING] * 4 + [Delivery.EXHAUSTED]
    # 60, 120, 240, 480 s between the five attempts: 15 minutes, then to the DLQ, its attempts counted
    assert retries.delays == [60, 120, 240, 480]
    assert [q.attempts for q, _ in retries.put_backs] == [1, 2, 3, 4]
    assert [(q.attempts, why) for q, why in retries.dead] == [(5, "exhausted")]
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
    clock, retries = FakeClock(), FakeCallbackQueue()
    wired = receivers(clock)
    result = deliver("{not json", wired, retries, clock)
    assert result.outcome is Delivery.MALFORMED and wired.endpoint.posts == []  # type: ignore[attr-defined]
    assert [why for _, why in retries.dead] == ["malformed"] and retries.put_backs == []


def test_nobodys_event_and_an_owner_without_a_url_are_acknowledged_without_a_post():
    clock, retries = FakeClock(), FakeCallbackQueue()
    wired = receivers(clock)
    suppression = deliver(bus_event(owner=None), wired, retries, clock)
    stranger = deliver(bus_event(owner="f" * 24), wired, retries, clock)
    assert suppression.outcome is stranger.outcome is Delivery.NO_RECEIVER
    assert wired.endpoint.posts == [] and retries.delays == [] and retries.dead == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("envelope", "why"),
    [
        ({"source": "ops.script"}, "source"),
        ({"source": "aws.events"}, "source"),
        ({"account": "999999999999"}, "account"),
        ({"account": ""}, "account"),
        ({"detail-type": "sendledger.message.forged"}, "detail-type"),
    ],
)
def test_an_event_that_is_not_this_accounts_publishers_is_never_posted(envelope, why):
    # The review's forgery: a hand-written state change naming a caller, put on the queue
    clock, queue = FakeClock(), FakeCallbackQueue()
    wired = receivers(clock)
    result = deliver(bus_event(**envelope), wired, queue, clock)
    assert result.outcome is Delivery.FOREIGN and result.refused == why
    assert wired.endpoint.posts == []  # type: ignore[attr-defined]
    assert [reason for _, reason in queue.dead] == [f"foreign: {why}"] and queue.put_backs == []


def test_an_event_without_a_source_or_account_is_foreign_too():
    clock, queue = FakeClock(), FakeCallbackQueue()
    wired = receivers(clock)
    event = json.loads(bus_event())
    del event["source"], event["account"]
    assert deliver(json.dumps(event), wired, queue, clock).outcome is Delivery.FOREIGN
    assert wired.endpoint.posts == []  # type: ignore[attr-defined]


def test_verify_refuses_a_changed_body_a_wrong_secret_and_an_old_timestamp():
    body = b'{"id":"x"}'
    header = signature(["k"], 1000, body)
    assert verify("k", header, body, now_unix=1000)
    assert not verify("k", header, body + b" ", now_unix=1000)
    assert not verify("other", header, body, now_unix=1000)
    assert not verify("k", header, body, now_unix=1000 + 301)
    assert not verify("k", header.replace("t=1000", "t=1000,t=1001"), body, now_unix=1000)
    assert not verify("k", "v1=" + header.split("v1=")[1], body, now_unix=1000)
