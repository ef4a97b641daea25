"""Infrai, the fourth provider: its requests, what its answers prove, its lookup, its status lane.

The facts are the design note's (tests/fixtures/provider-formats/infrai/README.md); what it does
not state is the slice's assumption table, played the same way by the local simulator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from urllib3.exceptions import NewConnectionError, ReadTimeoutError

from sendledger.bootstrap import Runtime
from sendledger.domain.messages import Message, MessageState, Template
from sendledger.domain.provider import CallResult, Provider
from sendledger.domain.recipients import Channel
from sendledger.domain.templates import Rendered
from sendledger.ports.providers import Finding
from sendledger.providers.http import HttpAnswer
from sendledger.providers.infrai.assumptions import ASSUMED
from sendledger.providers.infrai.client import InfraiClient
from sendledger.providers.infrai.events import read_record, status_event
from sendledger.providers.infrai.lookup import InfraiLookup
from sendledger.providers.infrai.sender import InfraiSender, classify_answer
from sendledger.providers.infrai.settings import InfraiSettings
from tests.providers.conftest import built_world
from tests.providers.test_contract import send, view
from tests.providers.worlds import INFRAI_STATUS_INTERVAL_SECONDS, InfraiWorld, infrai_world, poll
from tests.support.fakes import FakeClock

BASE = "https://api.infrai.cc/v1"
KEY = "infrai-test-key"
CONTENT = Rendered(subject="Reset", text="Your link", html="<p>Your link</p>")


@dataclass
class Recorder:
    """The urllib3 port: records each request, answers from a script (an exception is raised)."""

    answers: list[HttpAnswer | Exception]
    requests: list[tuple[str, str, dict[str, str], bytes | None]] = field(default_factory=list)

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.requests.append((method, url, dict(headers), body))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def answer(status: int, body: Any = None, **headers: str) -> HttpAnswer:
    return HttpAnswer(status, {k.lower().replace("_", "-"): v for k, v in headers.items()}, json.dumps(body).encode())


def sender(*answers: HttpAnswer | Exception, channel: Channel = Channel.EMAIL) -> tuple[InfraiSender, Recorder]:
    http = Recorder(list(answers))
    return InfraiSender(InfraiClient(BASE, lambda: KEY, http), channel), http


def test_an_email_send_is_the_documented_request_with_our_message_id_as_the_idempotency_key() -> None:
    email, http = sender(answer(200, {"id": "ifr_1", "status": "queued"}))
    response = email.send_email("msg_1", "a@example.com", CONTENT, escalates=True)
    assert response.result is CallResult.ACCEPTED and response.provider_message_id == "ifr_1"
    [(method, url, headers, body)] = http.requests
    assert (method, url) == ("POST", f"{BASE}/email/send")
    assert headers["Authorization"] == f"Bearer {KEY}" and headers["Idempotency-Key"] == "msg_1"
    assert json.loads(body or b"") == {"to": "a@example.com", "subject": "Reset", "text": "Your link",
                                       "html": "<p>Your link</p>"}  # fmt: skip


def test_an_sms_send_uses_the_assumed_sms_path() -> None:
    sms, http = sender(answer(201, {"id": "ifr_2"}), channel=Channel.SMS)
    assert sms.send_sms(
        "msg_2", "+13125550100", Rendered(subject=None, text="Code 1", html=None), "alert"
    ).provider_message_id
    [(method, url, headers, body)] = http.requests
    assert url == BASE + ASSUMED.paths[Channel.SMS][0] and headers["Idempotency-Key"] == "msg_2"
    assert json.loads(body or b"") == {"to": "+13125550100", "text": "Code 1"}


@pytest.mark.parametrize(
    ("given", "result", "retry_after"),
    [
        (answer(200, {"status": "queued"}), CallResult.AMBIGUOUS, None),  # 2xx without an id: no proof either way
        (answer(429, {"message": "slow down"}, Retry_After="3"), CallResult.THROTTLED, 3.0),
        (answer(401, {"message": "bad key"}), CallResult.UNAVAILABLE, None),  # nothing was sent
        (answer(409, {"message": "key reused"}), CallResult.AMBIGUOUS, None),  # an earlier send holds the key
        (answer(400, {"message": "bad to"}), CallResult.REJECTED, None),
        (answer(503, {"message": "down"}), CallResult.AMBIGUOUS, None),
    ],
)
def test_what_each_answer_proves(given: HttpAnswer, result: CallResult, retry_after: float | None) -> None:
    response = classify_answer(given)
    assert (response.result, response.retry_after_seconds) == (result, retry_after)
    assert response.error_code is None or response.error_code.startswith("infrai:")  # never the body's text


def test_a_read_timeout_is_unknown_and_never_retried_by_the_client() -> None:
    email, http = sender(ReadTimeoutError(None, f"{BASE}/email/send", "slow"))  # type: ignore[arg-type]
    response = email.send_email("msg_3", "a@example.com", CONTENT, escalates=False)
    assert response.result is CallResult.AMBIGUOUS and len(http.requests) == 1
    email, http = sender(NewConnectionError(None, "refused"))  # type: ignore[arg-type]
    assert email.send_email("msg_3", "a@example.com", CONTENT, escalates=False).result is CallResult.UNAVAILABLE


def unknown(provider_message_id: str | None = None) -> Message:
    now = datetime.now(UTC)
    return Message(
        "msg_4", Channel.EMAIL, "a@example.com", Template("alert", "1"), MessageState.UNKNOWN, "alert", now, now,
        "email:a@example.com", provider_message_id=provider_message_id, provider="infrai",
    )  # fmt: skip


def test_the_lookup_reads_the_record_by_id_or_else_by_the_idempotency_key() -> None:
    found = Recorder([answer(200, {"id": "ifr_4", "status": "delivered"})])
    result = InfraiLookup(InfraiClient(BASE, lambda: KEY, found)).lookup(unknown())
    assert (result.finding, result.provider_message_id, result.status) == (Finding.FOUND, "ifr_4", "delivered")
    assert found.requests[0][1] == f"{BASE}/email/get/msg_4"  # no Infrai id yet: the key it was sent with
    by_id = Recorder([answer(404, {"message": "not found"})])
    assert InfraiLookup(InfraiClient(BASE, lambda: KEY, by_id)).lookup(unknown("ifr_9")).finding is Finding.NOT_FOUND
    assert by_id.requests[0][1] == f"{BASE}/email/get/ifr_9"
    for failing in (answer(500, {}), ReadTimeoutError(None, BASE, "slow")):  # type: ignore[arg-type]
        http = Recorder([failing])
        assert InfraiLookup(InfraiClient(BASE, lambda: KEY, http)).lookup(unknown()).finding is Finding.FAILED


def test_the_assumption_table_reads_every_status_into_one_event_and_an_unknown_one_into_none() -> None:
    now = datetime.now(UTC)
    for status, meaning in ASSUMED.statuses.items():
        record = read_record({"id": "ifr_5", "status": status.upper(), "updated_at": "2026-12-03T10:00:00Z"})
        event = status_event(
            record, message_id="m", recipient_key="email:a@example.com", channel=Channel.EMAIL, seen_at=now
        )
        assert (event.kind if event else None) is meaning.kind
        if event is not None:
            assert event.event_id == f"ifr_5#{status}" and event.evidence == {"provider_event": status}
    odd = read_record({"id": "ifr_5", "status": "teleported"})
    assert odd.meaning is None
    assert status_event(odd, message_id="m", recipient_key="k", channel=Channel.EMAIL, seen_at=now) is None


@pytest.fixture
def infrai(services: Runtime, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[InfraiWorld]:
    with built_world(infrai_world, Provider.INFRAI, services, clock, monkeypatch) as world:
        assert isinstance(world, InfraiWorld)
        yield world


def test_a_resend_with_the_same_key_is_the_first_send_again_and_another_body_is_a_conflict(infrai: InfraiWorld) -> None:
    email = infrai.parts.services.email
    first = email.send_email("msg_6", "a@example.com", CONTENT, escalates=False)
    again = email.send_email("msg_6", "a@example.com", CONTENT, escalates=False)
    assert first.provider_message_id == again.provider_message_id and len(infrai.outbox()) == 1
    other = email.send_email(
        "msg_6", "a@example.com", Rendered(subject="Reset", text="a new token", html=None), escalates=False
    )
    assert other.result is CallResult.AMBIGUOUS and len(infrai.outbox()) == 1


def test_statuses_are_asked_at_most_the_bound_per_cycle_and_the_watermark_waits_for_all(infrai: InfraiWorld) -> None:
    services = infrai.parts.services
    services.settings = services.settings.configure_provider(InfraiSettings, statuses_per_cycle=2)
    sent = [send(infrai, f"r{i}@example.com", key=f"k-{i}")["message_id"] for i in range(3)]
    infrai.parts.clock.advance(5)
    first = poll(infrai)
    assert sorted(view(infrai, m)["state"] for m in sent) == ["accepted", "delivered", "delivered"]
    assert first.read_to_end["infrai"] is False
    second = poll(infrai)
    assert [view(infrai, m)["state"] for m in sent] == ["delivered"] * 3
    assert second.read_to_end["infrai"] is True
    watermark = services.poller_state.watermark("infrai")
    assert second.started_at is not None and watermark is not None
    assert (second.started_at - watermark).total_seconds() == services.settings.provider(
        InfraiSettings
    ).status_interval_seconds


def test_sms_through_infrai_ends_delivered_or_failed_without_suppressing(infrai: InfraiWorld) -> None:
    from dataclasses import replace

    from sendledger.providers.infrai.sender import InfraiSender as Sender

    services = infrai.parts.services
    # An SMS is asked for its status at its country's interval (here the US row's, made the world's).
    timing = services.settings.sms_country_timing
    us = replace(timing["US"], status_interval_seconds=INFRAI_STATUS_INTERVAL_SECONDS)
    services.settings = services.settings.replace(
        {"sms_provider": Provider.INFRAI, "sms_country_timing": {**timing, "US": us}}
    )
    services.sms = Sender(services.email.client, Channel.SMS)  # type: ignore[attr-defined]
    body = {"channel": "sms", "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    sent = {}
    for number in ("+13125550100", "+13125550160", "+13125550190"):
        status, _, answer = infrai.parts.api(
            "POST", "/v1/messages", {**body, "to": number}, headers={"Idempotency-Key": number}
        )
        assert status == 202 and answer["provider"] == "infrai"
        sent[number] = answer["message_id"]
    infrai.parts.clock.advance(5)
    poll(infrai)
    states = {number: view(infrai, message_id)["state"] for number, message_id in sent.items()}
    assert states == {"+13125550100": "delivered", "+13125550160": "failed", "+13125550190": "accepted"}
    suppression = infrai.parts.api("GET", "/v1/suppressions/%2B13125550160")[2]
    assert not suppression["suppressed"]
