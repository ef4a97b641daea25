"""The SendGrid mail send adapter against SendGrid's documented request and answers."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from urllib3.exceptions import NewConnectionError, ProtocolError, ReadTimeoutError

from sendledger.domain.provider import CallResult
from sendledger.domain.templates import Rendered
from sendledger.providers.http import HttpAnswer
from sendledger.providers.sendgrid.events import ESCALATES_ARG
from sendledger.providers.sendgrid.sender import SendGridEmailSender, mail_send_body
from tests.providers.formats import provider_format, raw_answers

KEY = "SG.EXAMPLE-KEY-ID.EXAMPLE-NOT-A-REAL-SECRET"
NOW = 1795946400.0  # the samples' 2026-11-29T10:00:00Z
CONTENT = Rendered(subject="Reset your password", text="plain", html="<p>html</p>")


class ScriptedHttp:
    def __init__(self, answer: HttpAnswer | Exception) -> None:
        self.answer = answer
        self.calls: list[tuple[str, str, bytes | None, dict[str, str]]] = []

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.calls.append((method, url, body, dict(headers)))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def sender(http: ScriptedHttp) -> SendGridEmailSender:
    return SendGridEmailSender("no-reply@example.com", "https://api.sendgrid.com/", lambda: KEY, http, lambda: NOW)


def answer(case_prefix: str) -> HttpAnswer:
    found = [a for a in raw_answers("sendgrid-error-responses.txt") if a.case.startswith(case_prefix)]
    return HttpAnswer(found[0].status, found[0].headers, found[0].body)


def test_the_request_has_the_documented_shape_with_our_message_id_as_custom_arg() -> None:
    reference = provider_format("sendgrid-mail-send-request.json")
    content = Rendered(reference["subject"], reference["content"][0]["value"], reference["content"][1]["value"])
    body = mail_send_body(
        "no-reply@example.com", "msg_01JEXAMPLE0000000000000000", "recipient@example.com", content, escalates=True
    )
    # Our request is the sample less its display names, with our single category and, beside our
    # message id, whether the message escalates.
    reference["custom_args"][ESCALATES_ARG] = "1"
    reference["personalizations"][0]["to"][0].pop("name")
    reference["from"].pop("name")
    reference["categories"] = ["sendledger"]
    assert body == reference


def test_accepted_answer_gives_the_x_message_id_and_the_call_carries_the_key() -> None:
    [ok] = raw_answers("sendgrid-mail-send-response.txt")
    http = ScriptedHttp(HttpAnswer(ok.status, ok.headers, ok.body))
    response = sender(http).send_email("msg_1", "recipient@example.com", CONTENT, escalates=False)
    assert response.result is CallResult.ACCEPTED and response.provider_message_id == "EXAMPLE-xMsgId-000000A"
    [(method, url, _, headers)] = http.calls
    assert (method, url) == ("POST", "https://api.sendgrid.com/v3/mail/send")
    assert headers["Authorization"] == f"Bearer {KEY}" and headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("case", "result", "code"),
    [
        ("400", CallResult.REJECTED, "http-400:content.0.value"),
        ("401", CallResult.UNAVAILABLE, "http-401"),  # a bad key is the account's, not the message's
        ("429", CallResult.THROTTLED, "http-429"),
        ("500", CallResult.AMBIGUOUS, "http-500"),  # may have been accepted
    ],
)
def test_error_answers_map_to_what_they_prove(case: str, result: CallResult, code: str) -> None:
    response = sender(ScriptedHttp(answer(case))).send_email("msg_1", "recipient@example.com", CONTENT, escalates=False)
    assert (response.result, response.error_code) == (result, code)
    assert response.provider_message_id is None


def test_throttling_waits_until_the_rate_limit_reset() -> None:
    response = sender(ScriptedHttp(answer("429"))).send_email(
        "msg_1", "recipient@example.com", CONTENT, escalates=False
    )
    assert response.retry_after_seconds == 60.0  # X-RateLimit-Reset 1795946460, now 1795946400
    retry_after = HttpAnswer(429, {"retry-after": "7", "x-ratelimit-reset": "1795946460"}, b"{}")
    assert (
        sender(ScriptedHttp(retry_after)).send_email("m", "r@example.com", CONTENT, escalates=False).retry_after_seconds
        == 7.0
    )


@pytest.mark.parametrize(
    ("error", "result"),
    [
        (ReadTimeoutError(None, "/v3/mail/send", "read timed out"), CallResult.AMBIGUOUS),  # type: ignore[arg-type]
        (ProtocolError("Connection aborted.", ConnectionResetError()), CallResult.AMBIGUOUS),
        (NewConnectionError(None, "refused"), CallResult.UNAVAILABLE),  # type: ignore[arg-type]
    ],
)
def test_transport_failures_say_whether_the_request_may_have_arrived(error: Exception, result: CallResult) -> None:
    assert sender(ScriptedHttp(error)).send_email("msg_1", "r@example.com", CONTENT, escalates=False).result is result
