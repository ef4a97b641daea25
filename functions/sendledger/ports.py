"""Ports: what the use cases need from the outside world. Adapters implement them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.messages import HistoryEntry, Message, MessageState
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.templates import Rendered

MISSING: Any = object()  # "the item does not exist" inside a conflict report


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class IdempotencyRecord:
    key: str
    fingerprint: str
    message_id: str
    completed: bool
    lease_until: datetime
    expires_at: datetime
    response: StoredResponse | None = None


@dataclass(frozen=True)
class ResetRecord:
    account_id: str
    reset_id: str
    state: str  # active | consumed | invalidated
    token_hash: str
    created_at: datetime
    expires_at: datetime
    failed_attempts: int
    message_id: str


@dataclass(frozen=True)
class Expectations:
    """Conditions the intent transaction asserts about state it does not read first."""

    suppression_version: int = 0  # 0: no suppression item may exist
    last_send_max: datetime | None = None  # optimistic: absent or not newer than this
    last_send_exact: Any = MISSING  # exact retry: the value read, or MISSING (absent)
    watermark_min: datetime | None = None  # optimistic: source watermark at least this
    watermark_source: str = "ses"


@dataclass
class SendIntent:
    message: Message
    first_entry: HistoryEntry
    lease_until: datetime
    expectations: Expectations
    idempotency_key: str | None = None
    fingerprint: str | None = None
    idempotency_expires_at: datetime | None = None
    reset: ResetRecord | None = None
    reset_window_start: datetime | None = None


@dataclass
class IntentConflict(Exception):
    """The intent transaction was cancelled; each field reports one failed condition."""

    idempotency: IdempotencyRecord | None = None
    suppression: SuppressionState | None = None
    last_send: Any = None  # datetime, MISSING (absent), or None when that condition held
    watermark: Any = None  # datetime, MISSING, or None when that condition held
    reset: ResetRecord | None = None
    retryable: bool = False  # TransactionConflict / throttling: nothing was written


@dataclass
class Outcome:
    message: Message
    new_state: MessageState
    entry: HistoryEntry
    response: ProviderResponse | None = None
    idempotency_key: str | None = None
    stored_response: StoredResponse | None = None
    due_kind: str | None = None
    due_at: datetime | None = None


@dataclass
class SuppressionView:
    state: SuppressionState
    history: list[dict[str, Any]] = field(default_factory=list)


class Ledger(Protocol):
    def commit_intent(self, intent: SendIntent) -> None:
        """One transaction: idempotency + message + history (+reset) + eligibility checks."""

    def commit_without_send(self, intent: SendIntent, stored: StoredResponse | None) -> None:
        """Record an intent decided without a provider call (suppressed, deferred)."""

    def record_outcome(self, outcome: Outcome) -> None: ...

    def get_message(self, message_id: str, with_history: bool = True) -> Message | None: ...

    def get_watermark(self, source: str) -> datetime | None: ...

    def get_last_send(self, recipient_key: str) -> datetime | None: ...

    def get_suppression(self, recipient_key: str) -> SuppressionView: ...

    def change_suppression(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState: ...

    def get_reset(self, account_id: str) -> ResetRecord | None: ...

    def consume_reset(self, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        """Active + hash matches + not expired → consumed, in one conditional write."""

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None: ...

    def rearm_reset(self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry) -> None:
        """Replace the token of a reset whose send is proven not accepted, same reset id."""


class EmailSender(Protocol):
    def send_email(self, message_id: str, to: str, content: Rendered) -> ProviderResponse: ...


class SmsSender(Protocol):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse: ...
