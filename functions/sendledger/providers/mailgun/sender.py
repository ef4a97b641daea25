"""Mailgun `POST /v3/{domain}/messages`, form-encoded, with the sendledger message id as `v:`.

Answers map as every email sender's do: 200 with an id is acceptance; 429 is a throttle (retried with
backoff, honouring the wait Mailgun names); a read timeout, a dropped connection after the
request left, or a 5xx is ambiguous (`unknown`, resolved by the poller); other 4xx refuse for
good. Failing to connect proves nothing was sent.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from urllib3.exceptions import ConnectTimeoutError, HTTPError, MaxRetryError, ProtocolError, ReadTimeoutError

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.templates import Rendered
from sendledger.providers.http import Http, default_http
from sendledger.providers.mailgun.events import MESSAGE_ID_VARIABLE, TAG, bare_message_id
from sendledger.providers.mailgun.http import KeySource, basic_auth

# Per message, over the domain's settings: no click redirects (they would carry a reset token
# through Mailgun's logs), no open pixel.
UNTRACKED = [("o:tracking", "no"), ("o:tracking-clicks", "no"), ("o:tracking-opens", "no")]
_WAIT = re.compile(r"try again after (\d+(?:\.\d+)?) seconds?", re.IGNORECASE)


class MailgunEmailSender:
    def __init__(
        self,
        api_base: str,
        domain: str,
        sender: str,
        api_key: KeySource,
        http: Http | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.url = f"{api_base.rstrip('/')}/v3/{quote(domain, safe='')}/messages"
        self.sender = sender
        self.api_key = api_key
        self.http = http or default_http()  # the HTTP providers' one client: never retries
        self.now = now

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        # `escalates` is not sent: user variables are copied into the delivered mail's headers,
        # so a failure's marker stays and the poller reads the message to decide.
        fields: list[tuple[str, str]] = [
            ("from", self.sender),
            ("to", to),
            ("subject", content.subject or ""),
            ("text", content.text),
        ]
        if content.html:
            fields.append(("html", content.html))
        fields += [
            ("o:tag", TAG),
            # Comes back on every event as user-variables: it proves acceptance of a timed-out call.
            (f"v:{MESSAGE_ID_VARIABLE}", message_id),
            ("h:X-Sendledger-Message-Id", message_id),
        ]
        if not content.tracking:
            fields += UNTRACKED
        try:
            authorization = basic_auth(self.api_key())
        except DependencyUnavailable:
            return ProviderResponse(CallResult.UNAVAILABLE, error_code="mailgun:api-key-unavailable")  # nothing sent
        try:
            response = self.http.request(
                "POST",
                self.url,
                body=urlencode(fields).encode(),
                headers={
                    "Authorization": authorization,
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Accept": "application/json",
                },
            )
        except (HTTPError, OSError) as exc:
            return classify_failure(exc)
        return classify_answer(response.status, response.headers, response.body, self.now())


def classify_failure(exc: BaseException) -> ProviderResponse:
    """A call without an answer: did the request leave?"""
    if isinstance(exc, MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    if isinstance(exc, ConnectTimeoutError):  # NewConnectionError included: nothing was sent
        return ProviderResponse(CallResult.UNAVAILABLE, error_code=type(exc).__name__)
    if isinstance(exc, ReadTimeoutError | ProtocolError):
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
    return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)


def classify_answer(status: int, headers: Any, data: bytes, now: float) -> ProviderResponse:
    body = _json(data)
    if status == 200:
        message_id = body.get("id") if isinstance(body, dict) else None
        if isinstance(message_id, str) and message_id:
            return ProviderResponse(CallResult.ACCEPTED, provider_message_id=bare_message_id(message_id))
        return ProviderResponse(CallResult.AMBIGUOUS, error_code="mailgun:200-without-id")
    code = f"mailgun:{status}"
    if status == 429:
        return ProviderResponse(CallResult.THROTTLED, error_code=code, retry_after_seconds=_wait(headers, body, now))
    if status >= 500:
        # A 5xx may come after Mailgun queued the message: evidence, not permission.
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=code)
    return ProviderResponse(CallResult.REJECTED, error_code=code)


def _wait(headers: Any, body: Any, now: float) -> float | None:
    """Retry-After, else X-RateLimit-Reset (Unix seconds), else the wait the message names."""
    named = {str(name).lower(): raw for name, raw in (headers or {}).items()}
    for name, convert in (("retry-after", float), ("x-ratelimit-reset", lambda raw: float(raw) - now)):
        raw = named.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, convert(raw))
        except ValueError:
            continue
    match = _WAIT.search(str(body.get("message", ""))) if isinstance(body, dict) else None
    return float(match.group(1)) if match else None


def _json(data: bytes) -> Any:
    try:
        return json.loads(data or b"null")
    except ValueError:
        return None  # the 401 body is the bare word Forbidden
