"""The providers sendledger knows and the facts the core may rely on (which channels each carries,
which event source its events come from), what a provider call can tell us, and the bounded retry
policy around it.

A provider's code is its slice (sendledger/providers/<name>/), loaded by the composition root
alone (bootstrap/slices.py); the slice takes its name, source and channels from here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from sendledger.domain.messages import MessageState
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value


class Provider(StrEnum):
    """One member per provider slice: adding a provider is its slice, one line here and one in _FACTS."""

    SES = "ses"
    SNS = "sns"
    SENDGRID = "sendgrid"
    MAILGUN = "mailgun"
    INFRAI = "infrai"


_EMAIL, _SMS = frozenset({Channel.EMAIL}), frozenset({Channel.SMS})
# Each provider's channels and its event source (watermarks, the events' dedupe keys: SNS's has
# always said sms).
_FACTS: dict[Provider, tuple[frozenset[Channel], str]] = {
    Provider.SES: (_EMAIL, "ses"),
    Provider.SNS: (_SMS, "sms"),
    Provider.SENDGRID: (_EMAIL, "sendgrid"),
    Provider.MAILGUN: (_EMAIL, "mailgun"),
    Provider.INFRAI: (_EMAIL | _SMS, "infrai"),
}


def registered(name: str) -> Provider:
    """The provider of a registry name (KeyError for a name no provider has)."""
    if name not in Provider._value2member_map_:
        raise KeyError(f"no provider {name!r} is registered")
    return Provider(name)


def channels_of(provider: str) -> frozenset[Channel]:
    """The channels a registered provider carries."""
    return _FACTS[registered(provider)][0]


def source_of(provider: str) -> str:
    """The event source of a provider's messages (its watermark, its events' dedupe keys)."""
    return _FACTS[registered(provider)][1]


def carriers(channel: Channel) -> list[Provider]:
    """The registered providers that carry `channel`, in registry order."""
    return [provider for provider in Provider if channel in _FACTS[provider][0]]


class CallResult(StrEnum):
    ACCEPTED = "accepted"  # provider returned a message id
    THROTTLED = "throttled"  # refused for now, certainly not accepted: retry later
    UNAVAILABLE = "unavailable"  # could not reach the provider: certainly not accepted
    REJECTED = "rejected"  # refused permanently
    AMBIGUOUS = "ambiguous"  # timed out or 5xx after the request left: may have been accepted


@value
class ProviderResponse:
    result: CallResult
    provider_message_id: str | None = None
    request_id: str | None = None
    error_code: str | None = None
    retry_after_seconds: float | None = None
    attempts: int = 1

    @property
    def message_state(self) -> MessageState:
        return {
            CallResult.ACCEPTED: MessageState.ACCEPTED,
            CallResult.THROTTLED: MessageState.PENDING,
            CallResult.UNAVAILABLE: MessageState.PENDING,
            CallResult.REJECTED: MessageState.REJECTED,
            CallResult.AMBIGUOUS: MessageState.UNKNOWN,
        }[self.result]

    def evidence(self) -> dict[str, object]:
        evidence: dict[str, object] = {"provider_result": self.result.value, "attempts": self.attempts}
        if self.provider_message_id:
            evidence["provider_message_id"] = self.provider_message_id
        if self.request_id:
            evidence["provider_request_id"] = self.request_id
        if self.error_code:
            evidence["provider_error"] = self.error_code
        return evidence


@dataclass
class Backoff:
    """Exponential backoff with full jitter, bounded by attempts and the caller's time left."""

    max_attempts: int = 4
    base_seconds: float = 0.2
    cap_seconds: float = 5.0
    rng: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        jittered: float = self.rng() * min(self.cap_seconds, self.base_seconds * 2 ** (attempt - 1))
        return max(jittered, retry_after or 0.0)


def call_with_backoff(
    call: Callable[[], ProviderResponse],
    backoff: Backoff,
    sleep: Callable[[float], None],
    seconds_left: Callable[[], float],
    safety_margin_seconds: float = 3.0,
) -> ProviderResponse:
    """Retry only when the provider certainly did not accept (throttled/unavailable)."""
    attempt = 1
    while True:
        response = call()
        if response.result not in (CallResult.THROTTLED, CallResult.UNAVAILABLE):
            return _with_attempts(response, attempt)
        if attempt >= backoff.max_attempts:
            return _with_attempts(response, attempt)
        wait = backoff.delay(attempt, response.retry_after_seconds)
        if wait + safety_margin_seconds >= seconds_left():
            return _with_attempts(response, attempt)
        sleep(wait)
        attempt += 1


def _with_attempts(response: ProviderResponse, attempts: int) -> ProviderResponse:
    return ProviderResponse(
        result=response.result,
        provider_message_id=response.provider_message_id,
        request_id=response.request_id,
        error_code=response.error_code,
        retry_after_seconds=response.retry_after_seconds,
        attempts=attempts,
    )
