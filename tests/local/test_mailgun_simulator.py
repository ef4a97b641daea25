"""The Mailgun adapters over HTTP against the local Mailgun simulator, and the simulator itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from urllib.parse import parse_qs

import pytest

from local.simulator.providers.mailgun import DEFAULT_DOMAIN, LOCAL_API_KEY, MailgunSimulator
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import EventKind
from sendledger.domain.provider import CallResult
from sendledger.domain.templates import Rendered
from sendledger.providers.http import HttpAnswer
from sendledger.providers.mailgun.events_api import MailgunEventsApi
from sendledger.providers.mailgun.sender import MailgunEmailSender, classify_answer
from tests.support.fakes import FakeClock
from tests.support.provider_fixtures import raw_http

CONTENT = Rendered(subject="Reset your password", text="Use this link", html="<p>Use this link</p>")
OUR_ID = "msg_01JEXAMPLE0000000000000010"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def mailgun(clock: FakeClock) -> Iterator[tuple[MailgunSimulator, str]]:
    simulator = MailgunSimulator(clock=clock.now)
    url = simulator.serve()
    yield simulator, url
    simulator.stop()


def sender(url: str, key: str = LOCAL_API_KEY) -> MailgunEmailSender:
    return MailgunEmailSender(url, DEFAULT_DOMAIN, "Example Notifications <no-reply@mg.example.com>", lambda: key)


def events_api(url: str) -> MailgunEventsApi:
    return MailgunEventsApi(url, DEFAULT_DOMAIN, lambda: LOCAL_API_KEY)


RECORDED = b'{"id": "<20261129100000.0000000000000010@mg.example.com>", "message": "Queued"}'


class _Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], str]] = []

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.requests.append((method, url, dict(headers), (body or b"").decode()))
        return HttpAnswer(200, {}, RECORDED)


def test_the_send_request_is_the_reference_request():
    reference = raw_http("mailgun-messages-request.txt")
    head, _, reference_body = reference.partition("\n\n")
    reference_headers = dict(line.split(": ", 1) for line in head.splitlines()[1:])
    recorder = _Recorder()
    adapter = MailgunEmailSender(
        "https://api.mailgun.net",
        "mg.example.com",
        "Example Notifications <no-reply@mg.example.com>",
        lambda: "EXAMPLE-not-a-real-api-key",
        http=recorder,
    )
    expected = parse_qs(reference_body.strip())
    response = adapter.send_email(
        OUR_ID,
        "recipient@example.com",
        Rendered(expected["subject"][0], expected["text"][0], expected["html"][0]),
        escalates=True,
    )
    # Only the message id rides as a user variable (Mailgun copies them into the mail's headers).
    [(method, url, headers, body)] = recorder.requests
    assert (method, url) == ("POST", "https://api.mailgun.net/v3/mg.example.com/messages")
    assert headers["Authorization"] == reference_headers["Authorization"]
    assert headers["Content-Type"] == reference_headers["Content-Type"]
    sent = parse_qs(body)
    # The reference also tags the template; the adapter tags every send `sendledger`.
    assert sent["o:tag"] == ["sendledger"]
    assert {k: v for k, v in sent.items() if k != "o:tag"} == {k: v for k, v in expected.items() if k != "o:tag"}
    assert response.result is CallResult.ACCEPTED
    assert response.provider_message_id == "20261129100000.0000000000000010@mg.example.com"


def _error_answers() -> dict[int, tuple[dict[str, str], bytes]]:
    answers = {}
    for block in raw_http("mailgun-error-responses.txt").split("### ")[1:]:
        lines = block.split("\n", 1)[1]
        head, _, body = lines.partition("\n\n")
        status_line, *header_lines = head.splitlines()
        headers = dict(line.split(": ", 1) for line in header_lines)
        answers[int(status_line.split()[1])] = (headers, body.strip().encode())
    return answers


@pytest.mark.parametrize(
    ("status", "result"),
    [
        (400, CallResult.REJECTED),
        (401, CallResult.REJECTED),  # body is the bare word Forbidden
        (404, CallResult.REJECTED),
        (429, CallResult.THROTTLED),
        (500, CallResult.AMBIGUOUS),
    ],
)
def test_each_reference_error_answer_is_classified(status, result):
    headers, body = _error_answers()[status]
    response = classify_answer(status, headers, body, now=1795946400.0)
    assert response.result is result and response.error_code == f"mailgun:{status}"
    if status == 429:
        assert response.retry_after_seconds == 120.0  # X-RateLimit-Reset minus now
        assert classify_answer(429, {}, body, now=0).retry_after_seconds == 120.0  # the body's wait


def test_a_plain_send_is_accepted_and_in_the_outbox(mailgun):
    simulator, url = mailgun
    response = sender(url).send_email(OUR_ID, "success@simulator.amazonses.com", CONTENT, escalates=False)
    assert response.result is CallResult.ACCEPTED
    [entry] = simulator.outbox()
    assert entry["provider"] == "mailgun" and entry["message_id"] == OUR_ID
    assert entry["provider_message_id"] == response.provider_message_id
    assert (entry["subject"], entry["text"], entry["html"]) == (CONTENT.subject, CONTENT.text, CONTENT.html)


def test_fault_labels(mailgun):
    simulator, url = mailgun
    adapter = sender(url)
    throttled = [adapter.send_email(OUR_ID, "alice+throttle@example.com", CONTENT, escalates=False) for _ in range(3)]
    assert [r.result for r in throttled] == [CallResult.THROTTLED, CallResult.THROTTLED, CallResult.ACCEPTED]
    assert throttled[0].retry_after_seconds is not None
    lost = [adapter.send_email(OUR_ID, "bob+timeout-lost@example.com", CONTENT, escalates=False) for _ in range(2)]
    assert [r.result for r in lost] == [CallResult.AMBIGUOUS, CallResult.ACCEPTED]
    accepted = adapter.send_email(OUR_ID, "carol+timeout-accepted@example.com", CONTENT, escalates=False)
    assert accepted.result is CallResult.AMBIGUOUS
    assert [entry["to"] for entry in simulator.outbox()] == [
        "alice+throttle@example.com",
        "bob+timeout-lost@example.com",
        "carol+timeout-accepted@example.com",  # Mailgun has it although the caller saw no answer
    ]


def test_a_wrong_key_is_refused_and_an_unreachable_api_proves_nothing_was_sent(mailgun):
    _, url = mailgun
    assert (
        sender(url, key="wrong").send_email(OUR_ID, "a@example.com", CONTENT, escalates=False).result
        is CallResult.REJECTED
    )
    closed = sender("http://127.0.0.1:9").send_email(OUR_ID, "a@example.com", CONTENT, escalates=False)
    assert closed.result is CallResult.UNAVAILABLE


def test_events_appear_late_and_a_followed_next_url_misses_them(mailgun, clock):
    simulator, url = mailgun
    api = events_api(url)
    begin = str(int(clock.now().timestamp()) - 1)
    sender(url).send_email(OUR_ID, "complaint@simulator.amazonses.com", CONTENT, escalates=False)
    clock.advance(2)
    page = api.query({"begin": begin, "ascending": "yes"})
    assert [item.event.kind for item in page.items if item.event] == [EventKind.DELIVERY]  # accepted: not yet
    clock.advance(2)
    assert page.next_url is not None
    later = api.follow(page.next_url)
    # Only what is newer than the page's last item: the late `accepted` sits behind it.
    assert [item.event.kind for item in later.items if item.event] == [EventKind.COMPLAINT]
    again = api.query({"begin": begin, "ascending": "yes"})
    kinds = [item.event.kind for item in again.items if item.event]
    assert kinds == [EventKind.SEND, EventKind.DELIVERY, EventKind.COMPLAINT]
    assert all(item.event and item.event.message_id == OUR_ID for item in again.items)
    assert api.follow(again.next_url or "").items == []


def test_filters_and_errors(mailgun, clock):
    simulator, url = mailgun
    api = events_api(url)
    sender(url).send_email(OUR_ID, "bounce@simulator.amazonses.com", CONTENT, escalates=False)
    sender(url).send_email("msg_other", "success@simulator.amazonses.com", CONTENT, escalates=False)
    clock.advance(10)
    page = api.query({"begin": "0", "ascending": "yes", "recipient": "bounce@simulator.amazonses.com"})
    assert {item.event.message_id for item in page.items if item.event} == {OUR_ID}
    assert [item.event.kind for item in page.items if item.event] == [EventKind.SEND, EventKind.BOUNCE]
    accepted = api.query({"begin": "0", "ascending": "yes", "event": "accepted"})
    assert len(accepted.items) == 2
    with pytest.raises(DependencyUnavailable):
        api.query({"begin": "0"})  # ascending is required without end
    with pytest.raises(DependencyUnavailable):
        api.follow("https://elsewhere.example/v3/mg.example.com/events/abc")  # the key stays home


def test_an_unreadable_api_key_means_nothing_was_sent(mailgun):
    simulator, url = mailgun

    def no_key() -> str:
        raise DependencyUnavailable("secret unavailable: GetParameterError")

    adapter = MailgunEmailSender(url, DEFAULT_DOMAIN, "n@mg.example.com", no_key)
    response = adapter.send_email(OUR_ID, "a@example.com", CONTENT, escalates=False)
    assert response.result is CallResult.UNAVAILABLE  # retried with backoff, then pending
    assert simulator.calls == 0


def test_the_local_stack_wiring_puts_the_keys_in_secrets_manager_and_points_the_lambdas_at_the_simulator():
    import boto3
    from moto import mock_aws

    from local.simulator.providers.mailgun import LOCAL_FINAL_AFTER_SECONDS, LOCAL_SIGNING_KEY, start_local
    from sendledger.providers.mailgun.settings import MailgunSettings
    from sendledger.settings import Settings

    environ: dict[str, str] = {}
    with mock_aws():
        simulator = start_local(environ, "us-east-1")
        try:
            settings = Settings.from_env(environ).provider(MailgunSettings)
            assert settings.api_base.startswith("http://127.0.0.1:")
            assert settings.events_final_after_seconds == LOCAL_FINAL_AFTER_SECONDS
            secrets = boto3.client("secretsmanager", region_name="us-east-1")
            read = secrets.get_secret_value(SecretId=settings.signing_key_secret_arn)["SecretString"]
            assert read == LOCAL_SIGNING_KEY
            key = secrets.get_secret_value(SecretId=settings.api_key_secret_arn)["SecretString"]
            adapter = MailgunEmailSender(settings.api_base, settings.domain, "n@x.example", lambda: key)
            assert adapter.send_email(OUR_ID, "a@example.com", CONTENT, escalates=False).result is CallResult.ACCEPTED
        finally:
            simulator.stop()
