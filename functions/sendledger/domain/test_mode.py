"""Test mode: a caller whose sends get simulated outcomes, kept apart from real recipients.

A test caller's message names its recipient under the caller's own namespace,
`test:<caller id>:<channel>:<address>`, so eligibility, the last-send guard and every
suppression of a test send live on an item no real send ever reads, and a real suppression
never decides a test outcome. A simulated send's provider message id names the caller,
`sendledger-test.<caller id>.<unique>`; every event the simulated provider reports carries it
where that provider's events carry its message id (providers/simulated/), so ingestion puts the
event's recipient in the same namespace (`scoped`) without reading the message: a simulated bounce
suppresses the test caller's `bounce@…`, never the real one.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from sendledger.domain.callers import CallerId
from sendledger.domain.recipients import fingerprint_of

if TYPE_CHECKING:  # the api, which imports this module, never loads the poller's event types
    from sendledger.domain.events import DeliveryEvent

KEY_PREFIX = "test:"
PROVIDER_ID_PREFIX = "sendledger-test."
_PROVIDER_ID = re.compile(r"sendledger-test\.(?P<caller>[A-Za-z0-9_-]{1,64})\.[A-Za-z0-9_-]{1,64}")
_KEY = re.compile(r"test:(?P<caller>[A-Za-z0-9_-]{1,64}):(?P<real>.+)")
_SEAL_LENGTH = 16  # a fingerprint's length: 64 bits of HMAC-SHA256


def recipient_key(caller: CallerId | str, real_key: str) -> str:
    """The test caller's own key for a recipient (`real_key` is `<channel>:<address>`)."""
    return f"{KEY_PREFIX}{caller}:{real_key}"


def real_key(key: str) -> str:
    """`<channel>:<address>` of a key, a test caller's or a real one."""
    match = _KEY.fullmatch(key)
    return match.group("real") if match else key


def is_test_key(key: str) -> bool:
    return _KEY.fullmatch(key) is not None


def caller_of_key(key: str) -> CallerId | None:
    """The test caller whose recipient `key` is; None for a real recipient's."""
    match = _KEY.fullmatch(key)
    return CallerId(match.group("caller")) if match else None


def simulated_provider_id(caller: CallerId | str, unique: str) -> str:
    """The provider message id a simulated provider gives a test caller's send."""
    return f"{PROVIDER_ID_PREFIX}{caller}.{unique}"


def sealed_provider_id(caller: CallerId | str, message_id: str, nonce: str) -> str:
    """A simulated provider id only this deployment can make for `message_id`: the nonce and its seal
    (keyed like recipient fingerprints). Test mode's queue applies an event that names a message only
    with its seal, so whoever can write that queue cannot move a real message (providers/simulated/outcomes.py)."""
    return simulated_provider_id(caller, nonce + _seal(message_id, nonce))


def seals(provider_message_id: str | None, message_id: str) -> bool:
    """Whether `provider_message_id` was made by sealed_provider_id for `message_id`."""
    if provider_message_id is None or caller_of(provider_message_id) is None:
        return False
    unique = provider_message_id.rsplit(".", 1)[1]
    nonce, seal = unique[:-_SEAL_LENGTH], unique[-_SEAL_LENGTH:]
    return bool(nonce) and hmac.compare_digest(seal, _seal(message_id, nonce))


def _seal(message_id: str, nonce: str) -> str:
    return fingerprint_of(f"test-outcome:{message_id}:{nonce}")


def caller_of(provider_message_id: str | None) -> CallerId | None:
    """The test caller a simulated provider message id names; None for a real provider's id."""
    if not provider_message_id or not provider_message_id.startswith(PROVIDER_ID_PREFIX):
        return None
    match = _PROVIDER_ID.fullmatch(provider_message_id)
    return CallerId(match.group("caller")) if match else None


def scoped(event: DeliveryEvent) -> DeliveryEvent:
    """The event as ingestion applies it: a simulated send's event names the test caller's key."""
    caller = caller_of(event.provider_message_id)
    if caller is None or event.recipient_key is None or is_test_key(event.recipient_key):
        return event
    key = recipient_key(caller, event.recipient_key)
    return replace(event, recipient_key=key, evidence={**event.evidence, "test": True})
