"""SendGrid v3 mail send (`POST /v3/mail/send`) with `custom_args.sendledger_message_id`.

The answer's `X-Message-Id` header is the provider message id. What an answer proves, as for
every email sender: 2xx accepted; 429 throttled (wait `Retry-After`, else until `X-RateLimit-Reset`); 401/403
refused for the account (bad or revoked key, temporary block), certainly not accepted, so
retried later; other 4xx refused for good; 5xx, a read timeout or a dropped connection after
the request left may have been accepted (unknown); no connection at all is unavailable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import HTTPError as Urllib3Error

from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.templates import Rendered
from sendledger.providers.http import Http, HttpAnswer, default_http
from sendledger.providers.sendgrid.events import CATEGORY, ESCALATES_ARG, MESSAGE_ID_ARG

MAIL_SEND_PATH = "/v3/mail/send"
# Seen on the 429 answers SendGrid documents; Retry-After is honoured too when present.
RATE_LIMIT_RESET = "x-ratelimit-reset"
# Per message, over the account's settings: no click redirects (they would carry a reset
# token through SendGrid's logs), no open pixel.
UNTRACKED = {"click_tracking": {"enable": False, "enable_text": False}, "open_tracking": {"enable": False}}


class SendGridEmailSender:
    def __init__(
        self,
        sender: str,
        api_base: str,
        api_key: Callable[[], str],
        http: Http | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.sender = sender
        self.url = api_base.rstrip("/") + MAIL_SEND_PATH
        self.api_key = api_key  # read per call through the secret cache; never logged
        self.http = http or default_http()
        self.now = now

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        body = json.dumps(
            mail_send_body(self.sender, message_id, to, content, escalates=escalates), separators=(",", ":")
        ).encode()
        headers = {
            "Authorization": f"Bearer {self.api_key()}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        try:
            answer = self.http.request("POST", self.url, body=body, headers=headers)
        except (ConnectTimeoutError, NewConnectionError, NameResolutionError) as exc:
            return ProviderResponse(CallResult.UNAVAILABLE, error_code=type(exc).__name__)
        except (ReadTimeoutError, ProtocolError) as exc:
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
        except Urllib3Error as exc:  # anything else after the request may have left: evidence, not permission
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
        return classify_answer(answer, self.now())


def mail_send_body(sender: str, message_id: str, to: str, content: Rendered, *, escalates: bool) -> dict[str, Any]:
    """The v3 mail send body: one personalization, text before html (SendGrid refuses the other order)."""
    parts = [{"type": "text/plain", "value": content.text}]
    if content.html:
        parts.append({"type": "text/html", "value": content.html})
    return {
        "personalizations": [{"to": [{"email": to}]}],
        "from": {"email": sender},
        "subject": content.subject or "",
        "content": parts,
        # Copied onto every event of the message: proves acceptance of a timed-out call.
        "custom_args": {MESSAGE_ID_ARG: message_id, ESCALATES_ARG: "1" if escalates else "0"},
        "categories": [CATEGORY],
        "mail_settings": {"sandbox_mode": {"enable": False}},
        **({} if content.tracking else {"tracking_settings": UNTRACKED}),
    }


def classify_answer(answer: HttpAnswer, now: float) -> ProviderResponse:
    status = answer.status
    if 200 <= status < 300:
        message_id = answer.headers.get("x-message-id")
        return ProviderResponse(
            CallResult.ACCEPTED, provider_message_id=message_id, error_code=None if message_id else "no X-Message-Id"
        )
    code = error_code(status, answer.body)
    if status == 429:
        return ProviderResponse(CallResult.THROTTLED, error_code=code, retry_after_seconds=retry_after(answer, now))
    if status in (401, 403):
        return ProviderResponse(CallResult.UNAVAILABLE, error_code=code, retry_after_seconds=retry_after(answer, now))
    if status >= 500:
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=code)
    return ProviderResponse(CallResult.REJECTED, error_code=code)


def error_code(status: int, body: bytes) -> str:
    """`http-400` plus the first error's field (SendGrid's messages may quote the request)."""
    try:
        errors = json.loads(body).get("errors") or []
        field = errors[0].get("field") if errors and isinstance(errors[0], Mapping) else None
    except (ValueError, AttributeError):
        field = None
    return f"http-{status}" + (f":{field}" if isinstance(field, str) and field else "")


def retry_after(answer: HttpAnswer, now: float) -> float | None:
    raw = answer.headers.get("retry-after")
    if raw is not None:
        try:
            return max(0.0, float(raw))
        except ValueError:
            pass
    reset = answer.headers.get(RATE_LIMIT_RESET)
    if reset is not None:
        try:
            return max(0.0, float(reset) - now)
        except ValueError:
            return None
    return None
