"""Callback attempts: the signature, and the backoff the queue's visibility carries out."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field

from sendledger.domain.callbacks import signature, verify
from sendledger.usecases.callbacks import CallbackTarget, Delivery, deliver_callback
from tests.support.fakes import FakeClock

BUS_EVENT = json.dumps(
    {
        "version": "0",
        "id": "eb-1",
        "detail-type": "sendledger.message.state-changed",
        "source": "sendledger",
        "time": "2026-01-01T00:00:00Z",
        "detail": {
            "event_id": "abc",
            "message_id": "msg_1",
            "state": "bounced",
            "occurred_at": "2026-01-01T00:00:00.000Z",
        },
    }
)


@dataclass
class Endpoint:
    answers: list[int | None]
    seen: list[tuple[bytes, dict[str, str]]] = field(default_factory=list)

    def post(self, url, body, headers, timeout_seconds):
        self.seen.append((body, headers))
        return self.answers.pop(0)


@dataclass
class Retries:
    delays: list[int] = field(default_factory=list)

    def retry_in(self, receipt_handle, seconds):
        self.delays.append(seconds)


def attempts(answers, max_attempts=5, base=60):
    clock, endpoint, retries = FakeClock(), Endpoint(list(answers)), Retries()
    target = CallbackTarget("https://hooks.example.com/x", "s3cret", base, max_attempts, 10)
    results = []
    for attempt in range(1, len(answers) + 1):
        results.append(
            deliver_callback(BUS_EVENT, attempt, "rh", target=target, endpoint=endpoint, retries=retries, clock=clock)
        )
        clock.advance(results[-1].retry_in_seconds or 0)
    return results, endpoint, retries, clock


def test_failed_attempts_back_off_exponentially_then_go_to_the_dlq():
    results, endpoint, retries, _ = attempts([500, None, 503, 429, 500], max_attempts=5, base=60)
    assert [r.outcome for r in results] == [Delivery.RETRYING] * 4 + [Delivery.EXHAUSTED]
    # 60, 120, 240, 480 s between the five attempts: 15 minutes, then straight to the redrive
    assert retries.delays == [60, 120, 240, 480, 0]
    assert len({body for body, _ in endpoint.seen}) == 1  # the same body every time


def test_a_2xx_answer_ends_the_retries_and_each_attempt_is_signed_at_its_own_time():
    results, endpoint, retries, clock = attempts([500, 204], base=1)
    assert [r.outcome for r in results] == [Delivery.RETRYING, Delivery.DELIVERED]
    assert retries.delays == [1]
    (body, first), (_, second) = endpoint.seen
    assert first["Sendledger-Event-Id"] == second["Sendledger-Event-Id"] == "abc"
    assert first["Sendledger-Signature"] != second["Sendledger-Signature"]  # t moved by the backoff
    t = int(clock.now().timestamp())
    mac = hmac.new(b"s3cret", f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    assert second["Sendledger-Signature"] == f"t={t},v1={mac}"
    assert json.loads(body) == {
        "id": "abc",
        "type": "sendledger.message.state-changed",
        "created_at": "2026-01-01T00:00:00.000Z",
        "data": json.loads(BUS_EVENT)["detail"],
    }


def test_an_unreadable_queue_message_is_not_posted():
    clock, endpoint, retries = FakeClock(), Endpoint([]), Retries()
    target = CallbackTarget("https://hooks.example.com/x", "s", 1, 3, 10)
    result = deliver_callback("{not json", 1, "rh", target=target, endpoint=endpoint, retries=retries, clock=clock)
    assert result.outcome is Delivery.MALFORMED and endpoint.seen == [] and retries.delays == [0]


def test_verify_refuses_a_changed_body_a_wrong_secret_and_an_old_timestamp():
    body = b'{"id":"x"}'
    header = signature("k", 1000, body)
    assert verify("k", header, body, now_unix=1000)
    assert not verify("k", header, body + b" ", now_unix=1000)
    assert not verify("other", header, body, now_unix=1000)
    assert not verify("k", header, body, now_unix=1000 + 301)
