"""Deliver one queued status event to the receiver of the caller that owns it, or schedule its
next attempt.

An event goes to its owner's callback URL alone (the owner is in the event: the caller whose
message changed). An event without one (a suppression change, which is every caller's and so
no caller's), or whose owner has no callback URL, is acknowledged without a POST. Before every
POST the URL's host is resolved again and every address vetted (domain/callback_targets.py);
the POST connects to a vetted address, or is not made (a failed attempt, like a 5xx).

Backoff is the queue's: a failed attempt moves the message's visibility to the next delay
(ChangeMessageVisibility) and leaves it queued; after the last attempt the queue's redrive
policy (maxReceiveCount = CALLBACK_MAX_ATTEMPTS) moves it to the DLQ. Nothing on the send or
ingestion path waits for a receiver.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sendledger.domain.callback_targets import IPAddress, parse_address, vet_addresses
from sendledger.domain.callbacks import Callback, MalformedBusEvent, from_bus_event, retry_delay_seconds
from sendledger.domain.caller_settings import CallbackUrl, Refused, UrlRefusal, parse_callback_url
from sendledger.domain.clock import Clock
from sendledger.domain.values import value
from sendledger.ports.callers import CallbackSecrets, CallerSettingsStore
from sendledger.ports.status_out import CallbackEndpoint, CallbackRetries, HostResolver


class Delivery(StrEnum):
    DELIVERED = "delivered"
    NO_RECEIVER = "no-receiver"  # nobody's event, or its owner has no callback URL: acknowledged, not POSTed
    RETRYING = "retrying"  # visible again after the backoff delay
    EXHAUSTED = "exhausted"  # last attempt failed: the redrive moves it to the DLQ
    MALFORMED = "malformed"  # never deliverable: straight on to the DLQ


class Withheld(StrEnum):
    """Why no POST was made, besides the target's own refusal (UrlRefusal)."""

    NO_SECRET = "no-secret"  # noqa: S105 - a reason: the owner has a URL but no secret (removed by hand)


@value
class CallbackPolicy:
    retry_base_seconds: int
    max_attempts: int
    timeout_seconds: float
    allow_loopback: bool = False  # the local stack's receiver (never deployed)


@dataclass
class Receivers:
    """Where a caller's callbacks go and what they are signed with."""

    callers: CallerSettingsStore  # cached per container
    secrets: CallbackSecrets  # cached per container
    resolver: HostResolver
    endpoint: CallbackEndpoint


@value
class Attempt:
    outcome: Delivery
    event_id: str | None
    status: int | None = None  # the receiver's answer; None: no answer (timeout, refused)
    retry_in_seconds: int | None = None
    refused: UrlRefusal | Withheld | None = None  # why no POST was made, for the log


def deliver_callback(
    raw: str,
    attempt: int,
    receipt_handle: str,
    *,
    policy: CallbackPolicy,
    receivers: Receivers,
    retries: CallbackRetries,
    clock: Clock,
) -> Attempt:
    try:
        callback: Callback = from_bus_event(raw)
    except MalformedBusEvent:
        retries.retry_in(receipt_handle, 0)
        return Attempt(Delivery.MALFORMED, None)
    if callback.owner is None:
        return Attempt(Delivery.NO_RECEIVER, callback.event_id)
    settings = receivers.callers.get(callback.owner)
    if settings.callback_url is None:
        return Attempt(Delivery.NO_RECEIVER, callback.event_id)
    status, refused = _post(callback, settings.callback_url, policy, receivers, clock)
    if status is not None and 200 <= status < 300:
        return Attempt(Delivery.DELIVERED, callback.event_id, status)
    if attempt >= policy.max_attempts:
        retries.retry_in(receipt_handle, 0)
        return Attempt(Delivery.EXHAUSTED, callback.event_id, status, 0, refused)
    delay = retry_delay_seconds(attempt, policy.retry_base_seconds)
    retries.retry_in(receipt_handle, delay)
    return Attempt(Delivery.RETRYING, callback.event_id, status, delay, refused)


def _post(
    callback: Callback, url_text: str, policy: CallbackPolicy, receivers: Receivers, clock: Clock
) -> tuple[int | None, UrlRefusal | Withheld | None]:
    """(the receiver's status, None) or (None, why no POST was made)."""
    assert callback.owner is not None
    keys = receivers.secrets.keys(callback.owner)
    if keys is None:
        return None, Withheld.NO_SECRET
    target = vetted_target(url_text, receivers.resolver, allow_loopback=policy.allow_loopback)
    if isinstance(target, Refused):
        return None, target.reason
    url, addresses = target
    headers = callback.headers(keys, int(clock.now().timestamp()))
    return receivers.endpoint.post(url, addresses, callback.body, headers, policy.timeout_seconds), None


def vetted_target(
    url_text: str, resolver: HostResolver, *, allow_loopback: bool
) -> tuple[CallbackUrl, tuple[IPAddress, ...]] | Refused:
    """The URL and the addresses its host names now, every one public; or why not. Asked when
    an admin sets the URL and again before every POST (which connects to these addresses)."""
    url = parse_callback_url(url_text, allow_http=allow_loopback)
    if isinstance(url, Refused):
        return url
    found = [url.host] if parse_address(url.host) is not None else resolver.addresses(url.host)
    vetted = vet_addresses(url, found, allow_loopback=allow_loopback)
    return vetted if isinstance(vetted, Refused) else (url, vetted)
