"""Mailgun webhook signatures: HMAC-SHA256 (hex) of timestamp + token with the signing key.

The signature covers only the timestamp and the token, not the event: a captured signature
block could be replayed with any body, so a token is accepted once (the caller records it)
and only while its timestamp is recent.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from sendledger.domain.values import value


class SignatureCheck(StrEnum):
    VALID = "valid"
    MISSING = "missing"  # no signature block, or a field of it absent
    STALE = "stale"  # timestamp outside the accepted window
    MISMATCH = "mismatch"


@value
class SignatureBlock:
    timestamp: str
    token: str
    signature: str

    @property
    def token_hash(self) -> str:
        """What the replay record keeps (never the token itself)."""
        return hashlib.sha256(self.token.encode()).hexdigest()


def signature_block(body: Mapping[str, Any]) -> SignatureBlock | None:
    block = body.get("signature")
    if not isinstance(block, Mapping):
        return None
    values = [block.get(name) for name in ("timestamp", "token", "signature")]
    # Documented as an int, a string in every sample: both read the same.
    values = [str(value) if isinstance(value, int) and not isinstance(value, bool) else value for value in values]
    if not all(isinstance(value, str) and value for value in values):
        return None
    timestamp, token, signature = values
    return SignatureBlock(str(timestamp), str(token), str(signature))


def expected_signature(signing_key: bytes, timestamp: str, token: str) -> str:
    return hmac.new(signing_key, (timestamp + token).encode(), hashlib.sha256).hexdigest()


def check_signature(
    block: SignatureBlock | None, signing_key: bytes, now: datetime, max_age_seconds: int
) -> SignatureCheck:
    if block is None:
        return SignatureCheck.MISSING
    try:
        timestamp = int(block.timestamp)
    except ValueError:
        return SignatureCheck.MISMATCH
    if abs(now.timestamp() - timestamp) > max_age_seconds:
        return SignatureCheck.STALE
    expected = expected_signature(signing_key, block.timestamp, block.token)
    if not hmac.compare_digest(expected.encode(), block.signature.lower().encode()):  # bytes: any input
        return SignatureCheck.MISMATCH
    return SignatureCheck.VALID
