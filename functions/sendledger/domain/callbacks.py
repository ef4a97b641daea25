"""Signed callbacks: the body and signature a receiver verifies, and when to try again.

`Sendledger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: the
timestamp is signed with the body, so a receiver can refuse old replays, and `id` (the
event_id, also `Sendledger-Event-Id`) is the same on every attempt, so it can dedupe.

Each caller has its own secret. While it is being rotated the caller has two, and every
callback carries one `v1=` per secret, the current one first (`t=...,v1=<new>,v1=<old>`, as
Stripe does): a receiver that holds either verifies, so it can switch when it likes, and the
rotation is ended (the old secret dropped) once it has.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import field
from datetime import datetime, timedelta
from typing import Any

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import parse_iso
from sendledger.domain.state_changes import OWNER_FIELD, SOURCE, DetailType
from sendledger.domain.values import value

EVENT_ID_HEADER = "Sendledger-Event-Id"
SIGNATURE_HEADER = "Sendledger-Signature"
MAX_DELAY_SECONDS = 12 * 3600  # SQS's longest visibility timeout


SECRET_BYTES = 32  # a new secret: 256 bits, URL-safe base64 (43 characters)
# How long a callbacks container keeps a caller's secrets: a rotation reaches every container
# within it, so the old secret is dropped no sooner (usecases/callers.py).
SECRET_CACHE = timedelta(minutes=5)


class MalformedBusEvent(ValueError):
    """A queued message that is not an EventBridge event at all (never becomes valid)."""


class ForeignBusEvent(ValueError):
    """An event, but not one our publisher put on our bus: another source, another account or
    a detail-type we never publish. Never POSTed: a receiver would verify it as ours."""


@value
class SigningKeys:
    """A caller's callback secrets: the current one, and the one it replaced while a rotation
    is open. Never logged: the secrets are left out of repr."""

    current: str = field(repr=False)
    previous: str | None = field(default=None, repr=False)
    rotated_at: datetime | None = None  # when `current` replaced `previous`

    @property
    def rotating(self) -> bool:
        return self.previous is not None

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.current, self.previous) if self.previous is not None else (self.current,)


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


@value
class Callback:
    event_id: str
    body: bytes  # sent exactly as signed
    owner: CallerId | None = None  # the caller whose message changed; None: nobody's (suppressions)
    created_at: datetime | None = None  # when the change happened (how long it has waited)

    def headers(self, keys: SigningKeys, unix_seconds: int) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            EVENT_ID_HEADER: self.event_id,
            SIGNATURE_HEADER: signature(keys.secrets, unix_seconds, self.body),
        }


def from_bus_event(raw: str, account_id: str) -> Callback:
    """The callback for an EventBridge event as an SQS target delivers it (the event's JSON),
    if the event is ours: `source` sendledger, put in `account_id` (the bus's and the queue's
    account), one of our detail-types. The queue's policy admits only the bus's rule; this is
    the consumer's own check, for a record that got in another way."""
    try:
        event = json.loads(raw)
        detail: dict[str, Any] = event["detail"]
        event_id = str(detail["event_id"])
        owner = detail.get(OWNER_FIELD)
        detail_type = str(event["detail-type"])
        body = {
            "id": event_id,
            "type": detail_type,
            "created_at": detail.get("occurred_at") or event.get("time"),
            "data": detail,
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedBusEvent(f"not a status event: {type(exc).__name__}") from None
    if event.get("source") != SOURCE:
        raise ForeignBusEvent("source")
    if event.get("account") != account_id:
        raise ForeignBusEvent("account")
    if detail_type not in {kind.value for kind in DetailType}:
        raise ForeignBusEvent("detail-type")
    encoded = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    caller = CallerId(owner) if isinstance(owner, str) and owner else None
    return Callback(event_id, encoded, caller, _moment(body["created_at"]))


def _moment(text: object) -> datetime | None:
    try:
        return parse_iso(str(text)) if text else None
    except ValueError:
        return None


def _mac(secret: str, unix_seconds: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{unix_seconds}.".encode() + body, hashlib.sha256).hexdigest()


def signature(keys: Sequence[str], unix_seconds: int, body: bytes) -> str:
    """`t=<t>,v1=<mac>` with one `v1` per secret, in the order given (the current one first)."""
    return ",".join([f"t={unix_seconds}", *(f"v1={_mac(secret, unix_seconds, body)}" for secret in keys)])


def verify(secret: str, header: str, body: bytes, now_unix: int, tolerance_seconds: int = 300) -> bool:
    """What a receiver holding `secret` does: some `v1` is its MAC, and `t` is recent
    (docs/status-out.md shows the same in a few lines)."""
    pairs = [part.split("=", 1) for part in header.split(",") if "=" in part]
    stamps = [text for name, text in pairs if name.strip() == "t"]
    if len(stamps) != 1 or not stamps[0].strip().isdigit():
        return False
    t = int(stamps[0])
    expected = _mac(secret, t, body)
    matched = [hmac.compare_digest(expected, text.strip()) for name, text in pairs if name.strip() == "v1"]
    return abs(now_unix - t) <= tolerance_seconds and any(matched)


def retry_delay_seconds(attempt: int, base_seconds: int) -> int:
    """Wait after failed attempt `attempt` (1-based): base, 2 base, 4 base, ... (capped)."""
    return int(min(base_seconds * 2 ** (attempt - 1), MAX_DELAY_SECONDS))
