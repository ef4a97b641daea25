"""What the use cases answer: domain values; the api handler alone picks status codes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.messages import Message
from sendledger.domain.sms_guardrails import SmsRefusal
from sendledger.domain.values import value


@value
class Accepted:
    """A new intent, committed: sent, decided without a send (suppressed) or deferred.

    `view` is the answer, the same one stored for a replay of its key.
    """

    message: Message
    view: dict[str, Any]


@value
class Replayed:
    """The same key again: the view the first request answered (or its message, if it crashed)."""

    view: dict[str, Any]


@value
class SmsRefused:
    """The owner's SMS guardrails refused it before any write: nothing was sent or stored."""

    refusal: SmsRefusal


SendResult = Accepted | Replayed | SmsRefused


@value
class ResetRequested:
    reset_id: str
    expires_at: datetime


@value
class TokenConsumed:
    reset_id: str
    account_id: str


@value
class TokenRefused:
    """Wrong, expired or already used: one answer for all three, so none can be told apart."""


@value
class SuppressionStatus:
    recipient: str
    state: SuppressionState
    history: list[dict[str, Any]]  # all of it (the admin's view), or the caller's own entries
    reason_class: str | None = None
