"""Infrai sends (email and SMS): what an answer proves, as for every provider.

2xx with an id: accepted (the id is the provider message id); 2xx without one: unknown. 429:
throttled (wait `Retry-After` seconds), certainly not accepted; 401/403: the key is refused,
nothing was sent (pending, retried later); a key conflict (409/422, assumed): the provider holds
an earlier send of this message, so unknown, for the lookup to find; other 4xx: rejected; 5xx, a
read timeout or a connection dropped after the request left: unknown; no connection: unavailable.
Error bodies are never kept: only `infrai:<status>`.
"""

from __future__ import annotations

import json
from typing import Any

from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.exceptions import HTTPError as Urllib3Error

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.recipients import Channel
from sendledger.domain.templates import Rendered
from sendledger.providers.http import HttpAnswer
from sendledger.providers.infrai.assumptions import ASSUMED
from sendledger.providers.infrai.client import InfraiClient


class InfraiSender:
    """The email port or the SMS port, by `channel`. Sendledger's message id is the Idempotency-Key:
    every attempt of one message carries the same key."""

    def __init__(self, client: InfraiClient, channel: Channel) -> None:
        self.client = client
        self.channel = channel

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        # `escalates` is not sent: Infrai pushes nothing back, and the poller reads the message anyway.
        body: dict[str, Any] = {"to": to, "subject": content.subject or "", "text": content.text}
        if content.html:
            body[ASSUMED.email_html_field] = content.html
        return self._send(body, message_id)

    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        destination, text = ASSUMED.sms_body_fields
        return self._send({destination: to, text: content.text}, message_id)

    def _send(self, body: dict[str, Any], message_id: str) -> ProviderResponse:
        try:
            answer = self.client.send(self.channel, body, message_id)
        except DependencyUnavailable:
            return ProviderResponse(CallResult.UNAVAILABLE, error_code="infrai:api-key-unavailable")  # nothing sent
        except (ConnectTimeoutError, NewConnectionError, NameResolutionError) as exc:
            return ProviderResponse(CallResult.UNAVAILABLE, error_code=type(exc).__name__)
        except Urllib3Error as exc:  # a read timeout, a dropped connection: it may have been accepted
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
        return classify_answer(answer)


def classify_answer(answer: HttpAnswer) -> ProviderResponse:
    status, code = answer.status, f"infrai:{answer.status}"
    if 200 <= status < 300:
        provider_id = _json(answer.body).get(ASSUMED.id_field)
        if isinstance(provider_id, str) and provider_id:
            return ProviderResponse(CallResult.ACCEPTED, provider_message_id=provider_id)
        return ProviderResponse(CallResult.AMBIGUOUS, error_code="infrai:2xx-without-id")
    if status == 429:
        return ProviderResponse(CallResult.THROTTLED, error_code=code, retry_after_seconds=retry_after(answer))
    if status in (401, 403):
        return ProviderResponse(CallResult.UNAVAILABLE, error_code=code, retry_after_seconds=retry_after(answer))
    if status in ASSUMED.conflict_statuses or status >= 500:
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=code)
    return ProviderResponse(CallResult.REJECTED, error_code=code)


def retry_after(answer: HttpAnswer) -> float | None:
    raw = answer.headers.get("retry-after")
    try:
        return max(0.0, float(raw)) if raw is not None else None
    except ValueError:
        return None


def _json(body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body or b"null")
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}
