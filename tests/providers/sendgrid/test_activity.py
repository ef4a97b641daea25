"""Unknown resolution through SendGrid's Email Activity API (SENDGRID_EMAIL_ACTIVITY=true)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from urllib3.exceptions import ReadTimeoutError

from sendledger.bootstrap import Runtime
from sendledger.domain.messages import Message, MessageState, Template
from sendledger.domain.provider import Provider
from sendledger.domain.recipients import Channel
from sendledger.ports.providers import Finding
from sendledger.providers.http import HttpAnswer
from sendledger.providers.sendgrid.lookup import SendGridEmailActivity
from tests.providers.conftest import built_world
from tests.providers.formats import PROVIDER_FORMATS, provider_format
from tests.providers.test_contract import send, view
from tests.providers.worlds import SendGridWorld, sendgrid_world
from tests.support.fakes import FakeClock

KEY = "SG.EXAMPLE-KEY-ID.EXAMPLE-NOT-A-REAL-SECRET"


class OneAnswer:
    def __init__(self, answer: HttpAnswer | Exception) -> None:
        self.answer = answer
        self.urls: list[str] = []

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        assert method == "GET" and headers["Authorization"] == f"Bearer {KEY}"
        self.urls.append(url)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def lookup(answer: HttpAnswer | Exception) -> tuple[SendGridEmailActivity, OneAnswer]:
    http = OneAnswer(answer)
    return SendGridEmailActivity("https://api.sendgrid.com", lambda: KEY, http), http


def unknown(message_id: str) -> Message:
    """A timed-out send as the poller hands it to the lookup."""
    now = datetime.now(UTC)
    template = Template("alert", "1")
    return Message(
        message_id, Channel.EMAIL, "a@example.com", template, MessageState.UNKNOWN, "alert", now, now, "k", "sendgrid"
    )


def test_the_query_is_the_documented_one_and_a_listed_message_proves_acceptance() -> None:
    body = (PROVIDER_FORMATS / "sendgrid-email-activity-response.json").read_bytes()
    activity, http = lookup(HttpAnswer(200, {}, body))
    result = activity.lookup(unknown("msg_01JEXAMPLE0000000000000000"))
    assert result.finding is Finding.FOUND
    assert (result.provider_message_id, result.status) == ("EXAMPLE-xMsgId-000000A", "delivered")
    request_line = Path(PROVIDER_FORMATS / "sendgrid-email-activity-request.txt").read_text().splitlines()[0]
    assert http.urls == ["https://api.sendgrid.com" + request_line.split()[1]]


def test_an_empty_list_is_not_found_and_a_failed_lookup_proves_nothing() -> None:
    empty = lookup(HttpAnswer(200, {}, b'{"messages":[]}'))[0].lookup(unknown("msg_1"))
    assert empty.finding is Finding.NOT_FOUND
    error = provider_format("sendgrid-error-response.json")
    assert (
        lookup(HttpAnswer(403, {}, json.dumps(error).encode()))[0].lookup(unknown("msg_1")).finding is Finding.FAILED
    )  # no add-on / no access
    assert lookup(HttpAnswer(200, {}, b"not json"))[0].lookup(unknown("msg_1")).finding is Finding.FAILED
    assert lookup(ReadTimeoutError(None, "/v3/messages", "slow"))[0].lookup(unknown("msg_1")).finding is Finding.FAILED  # type: ignore[arg-type]


@pytest.fixture
def with_activity(services: Runtime, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[SendGridWorld]:
    build = partial(sendgrid_world, email_activity=True)
    with built_world(build, Provider.SENDGRID, services, clock, monkeypatch) as world:
        assert isinstance(world, SendGridWorld)
        yield world


def test_a_timed_out_send_is_found_by_the_lookup_with_no_webhook_event(with_activity: SendGridWorld) -> None:
    world = with_activity
    sent = send(world, "erin+timeout-accepted@example.com")
    assert sent["state"] == "unknown"
    world.parts.clock.advance(901)
    report = world.parts.ingestion.poll()  # the webhook never posted: only the lookup can tell
    assert report.resolved == {"unknown_found_by_lookup": 1}
    message = view(world, sent["message_id"])
    assert message["state"] == "accepted"
    found = message["history"][-1]
    assert found["type"] == "provider_lookup" and found["lookup"] == "found" and found["provider"] == "sendgrid"
    assert found["provider_message_id"] == world.outbox()[0]["provider_message_id"]
    # The view names the id the lookup found (SendGrid's X-Message-Id), not null.
    assert message["provider_message_id"] == world.outbox()[0]["provider_message_id"]
    world.parts.clock.advance(2000)
    world.parts.ingestion.poll()
    assert len(world.outbox()) == 1


def test_not_found_after_the_grace_proves_absence_and_resends_once(with_activity: SendGridWorld) -> None:
    world = with_activity
    sent = send(world, "frank+timeout-lost@example.com")
    world.parts.clock.advance(901)
    report = world.parts.ingestion.poll()
    assert report.resolved == {"absence_proven": 1, "resent_accepted": 1}
    proven = next(e for e in view(world, sent["message_id"])["history"] if e["type"] == "absence_proven")
    assert proven["lookup"] == "not_found"
    assert len(world.outbox()) == 1


def test_a_message_another_provider_carried_is_not_looked_up(with_activity: SendGridWorld) -> None:
    world = with_activity
    sent = send(world, "gina+timeout-lost@example.com")
    services = world.parts.services
    # The same unknown message as if SES, still enabled beside SendGrid, had carried it.
    services.settings = services.settings.replace({"email_providers": frozenset({Provider.SES})})
    # The lookups built before stay (SendGrid's, answered by the simulator); the lanes follow the settings.
    services.messages.table.client.update_item(
        TableName=services.messages.table.name,
        Key={"pk": {"S": f"MSG#{sent['message_id']}"}, "sk": {"S": "MSG"}},
        UpdateExpression="REMOVE provider",
    )
    world.parts.clock.advance(901)
    report = world.parts.ingestion.poll()
    assert "unknown_found_by_lookup" not in report.resolved
    proven = next(e for e in view(world, sent["message_id"])["history"] if e["type"] == "absence_proven")
    assert "lookup" not in proven and proven["source"] == "ses"  # decided by the SES watermark alone
