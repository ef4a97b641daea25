"""Signed provider webhooks: a provider's check of what it posted, single-use tokens, and where
verified events wait for the poller (one intake design for every provider that pushes)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from sendledger.domain.values import value


class WebhookVerifier(Protocol):
    """A provider's webhook signature check over the bytes as received."""

    def verify(self, timestamp: str, body: bytes, signature: str) -> bool: ...


class WebhookOutcome(StrEnum):
    QUEUED = "queued"  # verified; every delivery event queued for the poller
    DUPLICATE = "duplicate"  # the same signed POST again (a provider's retry): already queued
    NOT_CONFIGURED = "not_configured"  # no verification key or no queue: nothing can be trusted
    UNSIGNED = "unsigned"  # a signature or timestamp is missing or unreadable
    STALE = "stale"  # signed too long ago (or in the future): a replay
    BAD_SIGNATURE = "bad_signature"
    REPLAYED = "replayed"  # a single-use token already used with another body
    MALFORMED = "malformed"  # signed, but not the provider's events


@value
class Verified:
    """A signed POST's events, each a queue message body; a token it may be used with once."""

    bodies: list[str]  # the delivery events (what proves nothing is left out)
    received: int  # events in the POST
    token_hash: str | None = None  # SHA-256 of the signature's single-use token, when the provider signs one
    replay_window_seconds: int = 0  # how long the token is remembered


@value
class Refused:
    outcome: WebhookOutcome
    detail: str


class WebhookIntake(Protocol):
    """A provider's side of the intake: read and verify one POST (the api's route calls it)."""

    max_body_bytes: int

    def verify(self, headers: Mapping[str, str], body: bytes, now: datetime) -> Verified | Refused:
        """`headers` with lower-case names."""


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
