"""Deliver one queued status event to CALLBACK_URL, or schedule its next attempt.

Backoff is the queue's: a failed attempt moves the message's visibility to the next delay
(ChangeMessageVisibility) and leaves it queued; after the last attempt the queue's redrive
policy (maxReceiveCount = CALLBACK_MAX_ATTEMPTS) moves it to the DLQ. Nothing on the send or
ingestion path waits for a receiver.
"""

from __future__ import annotations

from enum import StrEnum

from sendledger.domain.callbacks import Callback, MalformedBusEvent, from_bus_event, retry_delay_seconds
from sendledger.domain.clock import Clock
from sendledger.domain.values import value
from sendledger.ports.status_out import CallbackEndpoint, CallbackRetries


class Delivery(StrEnum):
    DELIVERED = "delivered"
    RETRYING = "retrying"  # visible again after the backoff delay
    EXHAUSTED = "exhausted"  # last attempt failed: the redrive moves it to the DLQ
    MALFORMED = "malformed"  # never deliverable: straight on to the DLQ


@value
class CallbackTarget:
    url: str
    secret: str
    retry_base_seconds: int
    max_attempts: int
    timeout_seconds: float


@value
class Attempt:
    outcome: Delivery
    event_id: str | None
    status: int | None = None  # the receiver's answer; None: no answer (timeout, refused)
    retry_in_seconds: int | None = None


def deliver_callback(
    raw: str,
    attempt: int,
    receipt_handle: str,
    *,
    target: CallbackTarget,
    endpoint: CallbackEndpoint,
    retries: CallbackRetries,
    clock: Clock,
) -> Attempt:
    try:
        callback: Callback = from_bus_event(raw)
    except MalformedBusEvent:
        retries.retry_in(receipt_handle, 0)
        return Attempt(Delivery.MALFORMED, None)
    headers = callback.headers(target.secret, int(clock.now().timestamp()))
    status = endpoint.post(target.url, callback.body, headers, target.timeout_seconds)
    if status is not None and 200 <= status < 300:
        return Attempt(Delivery.DELIVERED, callback.event_id, status)
    if attempt >= target.max_attempts:
        retries.retry_in(receipt_handle, 0)
        return Attempt(Delivery.EXHAUSTED, callback.event_id, status, 0)
    delay = retry_delay_seconds(attempt, target.retry_base_seconds)
    retries.retry_in(receipt_handle, delay)
    return Attempt(Delivery.RETRYING, callback.event_id, status, delay)
