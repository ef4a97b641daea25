"""Deliver one queued status event to the receiver of the caller that owns it, or schedule its
next attempt.

An event goes to its owner's callback URL alone (the owner is in the event: the caller whose
message changed). An event without one (a suppression change, which is every caller's and so
no caller's), or whose owner has no callback URL, is acknowledged without a POST. An event that
is not our publisher's (another source, account or detail-type) is never POSTed: it goes to the
DLQ, logged as foreign. Before every POST the URL's host is resolved again and every address
vetted (domain/callback_targets.py); the POST connects to a vetted address, or is not made (a
failed attempt, like a 5xx).

Backoff and attempts are the record's own (domain/callback_schedule.py): a failed attempt
queues the event again with one attempt more, visible after the backoff delay; after the last
one it goes to the DLQ. A record whose caller's receiver is resting, or that no longer fits in
the invocation or in its caller's share of the batch, is queued again unattempted, keeping its
attempts. In a batch the lookup and the POST end by the lane's share (`Share`) at the latest: a
receiver that answered nothing within it failed the attempt (like a timeout); one that answered
earlier in the batch and is cut off gets the record back unattempted (its share ran out, it did
not fail). Every record handled is acknowledged: its successor is queued, or it is in the DLQ.
Nothing on the send or ingestion path waits for a receiver.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sendledger.domain.callback_schedule import (
    LANE_SHARE_SECONDS,
    CircuitBreakers,
    Queued,
    Share,
    give_up_after,
    hop_seconds,
)
from sendledger.domain.callback_targets import IPAddress, parse_address, vet_addresses
from sendledger.domain.callbacks import (
    Callback,
    ForeignBusEvent,
    MalformedBusEvent,
    from_bus_event,
    retry_delay_seconds,
)
from sendledger.domain.caller_settings import CallbackUrl, Refused, UrlRefusal, parse_callback_url
from sendledger.domain.clock import Clock
from sendledger.domain.values import value
from sendledger.ports.callers import CallbackSecrets, CallerSettingsStore
from sendledger.ports.status_out import CallbackEndpoint, CallbackQueue, HostResolver


class Delivery(StrEnum):
    DELIVERED = "delivered"
    NO_RECEIVER = "no-receiver"  # nobody's event, or its owner has no callback URL: acknowledged, not POSTed
    RETRYING = "retrying"  # queued again with one attempt more, after the backoff delay
    EXHAUSTED = "exhausted"  # last attempt failed: moved to the DLQ
    MALFORMED = "malformed"  # never deliverable: moved to the DLQ
    FOREIGN = "foreign"  # not our publisher's event (source, account, detail-type): moved to the DLQ
    RESTING = "resting"  # its caller's receiver rests after failures: queued again, unattempted
    DEFERRED = "deferred"  # too little of the invocation or of the caller's share left: queued again, unattempted
    NOT_DUE = "not-due"  # the second hop of a backoff longer than SQS's delay
    GAVE_UP = "gave-up"  # waited the whole schedule for a resting receiver: moved to the DLQ


class Withheld(StrEnum):
    """Why no POST was made, besides the target's own refusal (UrlRefusal)."""

    NO_SECRET = "no-secret"  # noqa: S105 - a reason: the owner has a URL but no secret (removed by hand)


@value
class CallbackPolicy:
    retry_base_seconds: int
    max_attempts: int
    timeout_seconds: float
    allow_loopback: bool = False  # the local stack's receiver (never deployed)
    queue_call_seconds: float = 0  # the longest one put-back can take: part of a record's time budget
    lane_share_seconds: float = LANE_SHARE_SECONDS  # the longest a batch waits on one caller's receiver


@dataclass
class Receivers:
    """Where a caller's callbacks go and what they are signed with."""

    callers: CallerSettingsStore  # cached per container
    secrets: CallbackSecrets  # cached per container
    resolver: HostResolver
    endpoint: CallbackEndpoint
    breakers: CircuitBreakers  # per caller, per container


@value
class Attempt:
    outcome: Delivery
    event_id: str | None
    status: int | None = None  # the receiver's answer; None: no answer (timeout, refused)
    retry_in_seconds: int | None = None
    refused: UrlRefusal | Withheld | str | None = None  # why no POST was made, for the log
    owner: str | None = None  # the caller, for the log (an opaque hash)


def deliver_callback(
    queued: Queued,
    *,
    account_id: str,
    policy: CallbackPolicy,
    receivers: Receivers,
    queue: CallbackQueue,
    clock: Clock,
    seconds_left: float | None = None,
    share: Share | None = None,
) -> Attempt:
    """One record: POSTed, queued again (with or without an attempt counted), or dead-lettered.
    `seconds_left`: what remains of the invocation (None: no limit); `share`: what its caller's
    lane may still spend of the batch (None: a POST may take its whole timeout)."""
    try:
        callback: Callback = from_bus_event(queued.body, account_id)
    except MalformedBusEvent:
        queue.dead_letter(queued, Delivery.MALFORMED.value)
        return Attempt(Delivery.MALFORMED, None)
    except ForeignBusEvent as foreign:
        queue.dead_letter(queued, f"{Delivery.FOREIGN.value}: {foreign}")
        return Attempt(Delivery.FOREIGN, None, refused=str(foreign))
    if callback.owner is None:
        return Attempt(Delivery.NO_RECEIVER, callback.event_id)
    owner = str(callback.owner)
    now = clock.now()
    if queued.due_at is not None and queued.due_at > now:
        queue.put_back(queued, hop_seconds(now, queued.due_at))
        return Attempt(Delivery.NOT_DUE, callback.event_id, owner=owner)
    settings = receivers.callers.get(callback.owner)
    if settings.callback_url is None:
        return Attempt(Delivery.NO_RECEIVER, callback.event_id, owner=owner)
    if receivers.breakers.failing(callback.owner):
        waited = _rest(callback, queued, policy, receivers, queue, now)
        if waited is not None:
            return waited
    budget = policy.timeout_seconds if share is None else min(policy.timeout_seconds, share.seconds_left(clock.now()))
    fits = seconds_left is None or seconds_left >= budget + policy.queue_call_seconds  # its POST, then its put-back
    if budget <= 0 or not fits:
        return _defer(queued, callback, queue, owner)
    status, refused = _post(callback, settings.callback_url, policy, receivers, clock, budget)
    if status is not None and 200 <= status < 300:
        receivers.breakers.answered(callback.owner)
        return Attempt(Delivery.DELIVERED, callback.event_id, status, owner=owner)
    now = clock.now()
    cut = status is None and refused in (None, UrlRefusal.UNRESOLVED) and share is not None and now >= share.ends_at
    if cut and share is not None and share.answered:
        return _defer(queued, callback, queue, owner)  # cut off by the share, not failing: it answered before
    receivers.breakers.failed(callback.owner, now, policy.retry_base_seconds)
    if queued.attempts + 1 >= policy.max_attempts:
        queue.dead_letter(queued.after_attempt(now), Delivery.EXHAUSTED.value)
        return Attempt(Delivery.EXHAUSTED, callback.event_id, status, 0, refused, owner)
    delay = retry_delay_seconds(queued.attempts + 1, policy.retry_base_seconds)
    due = now + timedelta(seconds=delay)
    queue.put_back(queued.after_attempt(due), hop_seconds(now, due))
    return Attempt(Delivery.RETRYING, callback.event_id, status, delay, refused, owner)


def _defer(queued: Queued, callback: Callback, queue: CallbackQueue, owner: str) -> Attempt:
    """No time left for the record here: queued again at once, unattempted."""
    queue.put_back(queued.put_back(None), 0)
    return Attempt(Delivery.DEFERRED, callback.event_id, owner=owner)


def _rest(
    callback: Callback,
    queued: Queued,
    policy: CallbackPolicy,
    receivers: Receivers,
    queue: CallbackQueue,
    now: datetime,
) -> Attempt | None:
    """The owner's receiver is failing: the record waits for it unattempted, but no longer than
    its own schedule would have taken (then it goes to the DLQ). None: it is the probe."""
    assert callback.owner is not None
    resting = receivers.breakers.resting_until(callback.owner, now)
    if resting is None:
        return None
    deadline = (callback.created_at or now) + give_up_after(policy.retry_base_seconds, policy.max_attempts)
    if now >= deadline:
        queue.dead_letter(queued, Delivery.GAVE_UP.value)
        return Attempt(Delivery.GAVE_UP, callback.event_id, owner=callback.owner)
    delay = hop_seconds(now, min(resting, deadline))
    queue.put_back(queued.put_back(None), delay)
    return Attempt(Delivery.RESTING, callback.event_id, retry_in_seconds=delay, owner=callback.owner)


def _post(
    callback: Callback, url_text: str, policy: CallbackPolicy, receivers: Receivers, clock: Clock, budget: float
) -> tuple[int | None, UrlRefusal | Withheld | None]:
    """(the receiver's status, None) or (None, why no POST was made); the lookup and the POST
    end within `budget` seconds."""
    assert callback.owner is not None
    keys = receivers.secrets.keys(callback.owner)
    if keys is None:
        return None, Withheld.NO_SECRET
    # One deadline for the lookup and the POST: a resolver that hangs is a receiver that hangs
    started = clock.now()
    target = vetted_target(url_text, receivers.resolver, allow_loopback=policy.allow_loopback, timeout_seconds=budget)
    if isinstance(target, Refused):
        return None, target.reason
    url, addresses = target
    left = budget - (clock.now() - started).total_seconds()
    if left <= 0:
        return None, UrlRefusal.UNRESOLVED
    headers = callback.headers(keys, int(clock.now().timestamp()))
    return receivers.endpoint.post(url, addresses, callback.body, headers, left), None


def vetted_target(
    url_text: str, resolver: HostResolver, *, allow_loopback: bool, timeout_seconds: float | None = None
) -> tuple[CallbackUrl, tuple[IPAddress, ...]] | Refused:
    """The URL and the addresses its host names now, every one public; or why not. Asked when
    an admin sets the URL and again before every POST (which connects to these addresses),
    then within the POST's own deadline (`timeout_seconds`)."""
    url = parse_callback_url(url_text, allow_http=allow_loopback)
    if isinstance(url, Refused):
        return url
    found = [url.host] if parse_address(url.host) is not None else resolver.addresses(url.host, timeout_seconds)
    vetted = vet_addresses(url, found, allow_loopback=allow_loopback)
    return vetted if isinstance(vetted, Refused) else (url, vetted)
