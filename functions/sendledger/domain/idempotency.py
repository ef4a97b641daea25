"""Idempotency keys (draft-ietf-httpapi-idempotency-key-header) and payload fingerprints."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sendledger.domain.callers import CallerId
from sendledger.domain.errors import IdempotencyKeyMissing, InvalidRequest

MAX_KEY_LENGTH = 255
HEADER = "Idempotency-Key"


def parse_key(header_value: str | None) -> str | None:
    """Validate an Idempotency-Key header; a quoted Structured Field string is unquoted."""
    if header_value is None:
        return None
    value = header_value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        value = _unquote_sf_string(value[1:-1])
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(0x20 <= ord(c) <= 0x7E for c in value):
        raise InvalidRequest(
            "Idempotency-Key must be 1-255 printable ASCII characters",
            [{"field": HEADER, "message": "invalid"}],
        )
    return value


def _unquote_sf_string(inner: str) -> str:
    out, escaped = [], False
    for ch in inner:
        if escaped:
            if ch not in '"\\':
                raise InvalidRequest("invalid escape in quoted Idempotency-Key")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            raise InvalidRequest("unescaped quote in Idempotency-Key")
        else:
            out.append(ch)
    if escaped:
        raise InvalidRequest("dangling escape in Idempotency-Key")
    return "".join(out)


def derive_key(event_id: str, template_version: str) -> str:
    return hashlib.sha256(f"{event_id}:{template_version}".encode()).hexdigest()


def resolve_key(header_value: str | None, event_id: str | None, template_version: str) -> str:
    key = parse_key(header_value)
    if key is not None:
        return key
    if event_id is not None:
        return derive_key(event_id, template_version)
    raise IdempotencyKeyMissing("Idempotency-Key header is required unless the body has event_id")


def fingerprint(payload: dict[str, Any]) -> str:
    """128 bits of SHA-256: ample to tell one caller's two payloads apart, half the bytes stored."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def scoped_key(caller: CallerId, key: str) -> str:
    """Keys are per caller (domain/callers.py: every session of a role is one caller)."""
    return f"{caller}#{key}"
