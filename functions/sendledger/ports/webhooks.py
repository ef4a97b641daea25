"""Signed provider webhooks: the signature check, single-use tokens, and where verified events wait."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol


class WebhookVerifier(Protocol):
    """A provider's webhook signature check over the bytes as received."""

    def verify(self, timestamp: str, body: bytes, signature: str) -> bool: ...


class TokenClaim(StrEnum):
    CLAIMED = "claimed"  # first use of the token: go on
    SAME_BODY = "same_body"  # the same webhook again (a provider retry): already handled
    REPLAYED = "replayed"  # the token with another body: refuse


class WebhookTokenStore(Protocol):
    """Signed-webhook tokens already used (hashes only), so a captured signature is good once."""

    def claim(self, source: str, token_hash: str, body_hash: str, expires_at: datetime, now: datetime) -> TokenClaim:
        """One conditional write."""

    def release(self, source: str, token_hash: str, body_hash: str) -> None: ...


class EventSink(Protocol):
    """Where verified webhook events wait for the poller (a queue)."""

    def put(self, bodies: list[str]) -> None:
        """Queue every body, or raise DependencyUnavailable (some may be queued: the apply dedupes)."""
