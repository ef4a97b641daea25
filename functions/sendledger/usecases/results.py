"""What the use cases answer: domain values; the api handler alone picks status codes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.messages import Message


@dataclass(frozen=True)
class Accepted:
    """A new intent, committed: sent, decided without a send (suppressed) or deferred.

    `view` is the answer, the same one stored for a replay of its key.
    """

    message: Message
    view: dict[str, Any]


@dataclass(frozen=True)
class Replayed:
    """The same key again: the view the first request answered (or its message, if it crashed)."""

    view: dict[str, Any]


SendResult = Accepted | Replayed


@dataclass(frozen=True)
class ResetRequested:
    reset_id: str
    expires_at: datetime


@dataclass(frozen=True)
class TokenConsumed:
    reset_id: str
    account_id: str


@dataclass(frozen=True)
class TokenRefused:
    """Wrong, expired or already used: one answer for all three, so none can be told apart."""


@dataclass(frozen=True)
class SuppressionStatus:
    recipient: str
    state: SuppressionState
    history: list[dict[str, Any]]
