"""Password resets: one record per account, and the reset a new request replaces."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sendledger.domain.messages import HistoryEntry, Message
from sendledger.domain.values import value


@value
class ResetRecord:
    account_id: str
    reset_id: str
    state: str  # active | consumed | invalidated
    token_hash: str
    created_at: datetime
    expires_at: datetime
    failed_attempts: int
    message_id: str
    recipient_key: str | None = None  # the address mailed (a request with another replaces it)


@value
class Replacement:
    """The young active reset a request with another address replaces, and the entry its mail gets."""

    record: ResetRecord
    entry: HistoryEntry


class ResetStore(Protocol):
    """Password resets: one record per account."""

    def get(self, account_id: str) -> ResetRecord | None: ...

    def consume(self, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        """Active + hash matches + not expired → consumed, in one conditional write (then the
        reset's mail records it in its history)."""

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None:
        """Count a wrong token; the one that reaches the limit locks the reset (and its mail's
        history records it)."""

    def rearm(
        self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry, lease_until: datetime
    ) -> bool:
        """Swap in the hash of a fresh token and start its send (same reset id); False if the
        recipient is suppressed by now (nothing written)."""
