"""Password resets: one record per caller and account, and the reset a new request replaces."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sendledger.domain.callers import CallerId
from sendledger.domain.messages import HistoryEntry, Message
from sendledger.domain.values import value


@value
class ResetRecord:
    owner: CallerId  # resets are per caller: another caller's account "42" is another account
    account_id: str
    reset_id: str
    state: str  # active | consumed | invalidated
    token_hash: str
    created_at: datetime
    expires_at: datetime
    failed_attempts: int
    message_id: str
    # The mailed address's fingerprint (a request with another replaces the reset); the address
    # itself is on the reset's message, which needs it to send.
    recipient_fingerprint: str | None = None


@value
class Replacement:
    """The young active reset a request with another address replaces, and the entry its mail gets."""

    record: ResetRecord
    entry: HistoryEntry


class ResetStore(Protocol):
    """Password resets: one record per caller and account."""

    def get(self, owner: CallerId, account_id: str) -> ResetRecord | None: ...

    def consume(self, owner: CallerId, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
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
