"""Signed callbacks: the body and signature a receiver verifies, and when to try again.

`Sendledger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: the
timestamp is signed with the body, so a receiver can refuse old replays, and `id` (the
event_id, also `Sendledger-Event-Id`) is the same on every attempt, so it can dedupe.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from sendledger.domain.values import value

EVENT_ID_HEADER = "Sendledger-Event-Id"
SIGNATURE_HEADER = "Sendledger-Signature"
MAX_DELAY_SECONDS = 12 * 3600  # SQS's longest visibility timeout


class MalformedBusEvent(ValueError):
    """A queued message that is not an EventBridge event of ours (never becomes valid)."""


@value
class Callback:
    event_id: str
    body: bytes  # sent exactly as signed

    def headers(self, secret: str, unix_seconds: int) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            EVENT_ID_HEADER: self.event_id,
            SIGNATURE_HEADER: signature(secret, unix_seconds, self.body),
        }


def from_bus_event(raw: str) -> Callback:
    """The callback for an EventBridge event as an SQS target delivers it (the event's JSON)."""
    try:
        event = json.loads(raw)
        detail: dict[str, Any] = event["detail"]
        event_id = str(detail["event_id"])
        body = {
            "id": event_id,
            "type": str(event["detail-type"]),
            "created_at": detail.get("occurred_at") or event.get("time"),
            "data": detail,
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedBusEvent(f"not a status event: {type(exc).__name__}") from None
    return Callback(event_id, json.dumps(body, separators=(",", ":"), sort_keys=True).encode())


def signature(secret: str, unix_seconds: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{unix_seconds}.".encode() + body, hashlib.sha256)
    return f"t={unix_seconds},v1={mac.hexdigest()}"


def verify(secret: str, header: str, body: bytes, now_unix: int, tolerance_seconds: int = 300) -> bool:
    """What a receiver does (the README shows the same in a few lines)."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    expected = signature(secret, t, body).split("v1=", 1)[1]
    return abs(now_unix - t) <= tolerance_seconds and hmac.compare_digest(expected, parts.get("v1", ""))


def retry_delay_seconds(attempt: int, base_seconds: int) -> int:
    """Wait after failed attempt `attempt` (1-based): base, 2 base, 4 base, ... (capped)."""
    return int(min(base_seconds * 2 ** (attempt - 1), MAX_DELAY_SECONDS))
