"""A reset link never goes through a provider's click tracker: the requests SendGrid and Mailgun get.

With click tracking on for the account (or the Mailgun domain), a provider rewrites every link
into a redirect through its own servers, which log it: the reset token with it. The reset
template turns tracking off per message; other templates leave the account's choice alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from sendledger.domain import templates, tokens
from sendledger.domain.provider import CallResult
from sendledger.domain.recipients import Channel
from sendledger.domain.template_folder import TemplateFolder
from sendledger.domain.template_versions import TemplateVersion
from sendledger.providers.http import HttpAnswer
from sendledger.providers.mailgun.sender import MailgunEmailSender
from sendledger.providers.sendgrid.sender import SendGridEmailSender

LINK = tokens.reset_link("https://app.example.com/reset?token={token}", "TOKEN-SECRET-EXAMPLE")


SHIPPED = TemplateFolder()


def shipped(template_id: str) -> TemplateVersion:
    found = SHIPPED.get(template_id, "1")
    assert found is not None
    return found


def reset_mail() -> templates.Rendered:
    params = {"reset_link": LINK, "reset_window": "10 minutes"}
    return templates.render(shipped("password-reset"), Channel.EMAIL, params)


def alert_mail() -> templates.Rendered:
    return templates.render(shipped("alert"), Channel.EMAIL, {"summary": "disk full"})


@dataclass
class SendGridHttp:
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.bodies.append(json.loads(body or b"{}"))
        return HttpAnswer(202, {"x-message-id": "EXAMPLE-xMsgId"}, b"")


MAILGUN_ACCEPTED = b'{"id": "<20261129100000.1.EXAMPLE@mg.example.com>", "message": "Queued. Thank you."}'


@dataclass
class MailgunHttp:
    forms: list[list[tuple[str, str]]] = field(default_factory=list)

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        self.forms.append(parse_qsl((body or b"").decode(), keep_blank_values=True))
        return HttpAnswer(200, {}, MAILGUN_ACCEPTED)


def send_with_sendgrid(content: templates.Rendered) -> dict[str, Any]:
    http = SendGridHttp()
    sender = SendGridEmailSender("no-reply@example.com", "https://api.sendgrid.com", lambda: "SG.key", http)
    assert sender.send_email("msg_1", "bob@example.com", content, escalates=False).result is CallResult.ACCEPTED
    [body] = http.bodies
    return body


def send_with_mailgun(content: templates.Rendered) -> list[tuple[str, str]]:
    http = MailgunHttp()
    sender = MailgunEmailSender(
        "https://api.mailgun.net",
        "mg.example.com",
        "no-reply@example.com",
        lambda: "key-example",
        http=http,
    )
    assert sender.send_email("msg_1", "bob@example.com", content, escalates=False).result is CallResult.ACCEPTED
    [form] = http.forms
    return form


def test_the_reset_mail_carries_its_link_and_turns_tracking_off():
    content = reset_mail()
    assert LINK in content.text and content.html is not None and LINK in content.html
    assert content.tracking is False
    assert alert_mail().tracking is True


def test_sendgrid_gets_click_and_open_tracking_off_for_a_reset_only():
    body = send_with_sendgrid(reset_mail())
    assert body["tracking_settings"] == {
        "click_tracking": {"enable": False, "enable_text": False},
        "open_tracking": {"enable": False},
    }
    assert LINK in body["content"][0]["value"]
    assert "tracking_settings" not in send_with_sendgrid(alert_mail()), "the account's own choice for the rest"


def test_mailgun_gets_tracking_clicks_and_opens_off_for_a_reset_only():
    form = send_with_mailgun(reset_mail())
    options = {name: value for name, value in form if name.startswith("o:tracking")}
    assert options == {"o:tracking": "no", "o:tracking-clicks": "no", "o:tracking-opens": "no"}
    assert LINK in dict(form)["text"]
    assert not [name for name, _ in send_with_mailgun(alert_mail()) if name.startswith("o:tracking")]
