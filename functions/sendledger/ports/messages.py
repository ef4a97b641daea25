"""Messages: the send's intent and outcome, each keyed message also its key's idempotency record."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from sendledger.domain.export_window import Position, Window
from sendledger.domain.messages import DueKind, HistoryEntry, Message, MessageState, Transition
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.values import value
from sendledger.ports.recipients import RecipientState
from sendledger.ports.resets import Replacement, ResetRecord


@value
class StoredResponse:
    """The message as the first request answered it (a replay renders the same view again)."""

    message: Message

    @classmethod
    def of(cls, message: Message) -> StoredResponse:
        """A copy of the message as this answer shows it (later changes do not alter the answer)."""
        return cls(replace(message, history=[]))


@value
class IdempotencyRecord:
    """A keyed send's message item, seen as the record of its key."""

    key: str
    fingerprint: str
    message_id: str
    completed: bool
    lease_until: datetime
    expires_at: datetime
    response: StoredResponse | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at <= now  # TTL-like expiry is checked in code, never trusted to have run


@value
class LastSendCondition:
    """What the intent asserts about the recipient's last-send marker.

    Optimistic (`exact=False`): absent, or not after `value` (None: absent only). Exact: equal
    to `value`, the marker as read (None: absent).
    """

    value: datetime | None = None
    exact: bool = False


@value
class RecordLastSend:
    """No condition on the last-send marker (the `allow` policy): the recipient's update records
    the send it replaces and `stale_after`, the intent's watermark minus the grace (None: no
    watermark), for the publisher to label the send from (domain/eligibility.py RecordedSend)."""

    stale_after: datetime | None = None


@value
class Expectations:
    """Conditions the intent asserts about recipient state it does not read first."""

    suppression_version: int = 0  # 0: never suppressed
    last_send: LastSendCondition | RecordLastSend = LastSendCondition()


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
    replaces: Replacement | None = None
    due: tuple[DueKind, datetime] | None = None  # poller work; default: in flight until the lease ends
    generation: int = 0  # of a keyed message id: bumped when an expired key is used again


@value
class CreatedPage:
    positions: list[Position]
    more: bool  # entries may follow the last position


@value
class IntentConflict:
    """The intent was not written; each field reports one failed condition with what is there."""

    existing: IdempotencyRecord | None = None  # the key's message item
    recipient: RecipientState | None = None
    reset: ResetRecord | None = None  # the account's young active reset
    retryable: bool = False  # TransactionConflict / throttling: nothing was written
    # Another write is in progress on the key's message item (DynamoDB's TransactionConflict on
    # it): for a keyed intent, a request with the same key is in flight right now.
    in_flight: bool = False


@dataclass
class Outcome:
    message: Message
    new_state: MessageState
    entry: HistoryEntry
    response: ProviderResponse | None = None
    idempotency_key: str | None = None
    stored_response: StoredResponse | None = None
    due_kind: DueKind | None = None
    due_at: datetime | None = None


class MessageStore(Protocol):
    """Messages: each keyed one also its key's idempotency record; history append-only."""

    def commit_intent(self, intent: SendIntent) -> IntentConflict | None:
        """One write: the message (its key's record, first entry) + the recipient's
        eligibility condition and last-send marker (+ reset, escalation timer)."""

    def commit_decided(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        """Record an intent decided without a provider call (suppressed, deferred)."""

    def record_outcome(self, outcome: Outcome) -> None: ...

    def get(self, message_id: str) -> Message | None:
        """The message with its history (and an SMS's receipt merged in)."""

    def transition(
        self,
        message_id: str,
        allowed: frozenset[MessageState],
        target: MessageState,
        entries: list[HistoryEntry],
        due: tuple[DueKind, datetime] | None,
        attempt: int | None = None,
        unsuppressed: str | None = None,
        unless_evidence: bool = False,
        provider_message_id: str | None = None,
    ) -> Transition:
        """Conditional state change + history in one write (`unsuppressed`: a recipient key
        that must not be suppressed for the change to land; `unless_evidence`: nor may any
        delivery event have been recorded for the message; `provider_message_id`: the id a
        provider's lookup found, recorded with the change)."""

    def idempotency_key_of(self, message_id: str) -> str | None: ...

    def created_in(self, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
        """The owner's messages created in `window`, oldest first, from just after `after` (the
        evidence index; never a scan)."""
