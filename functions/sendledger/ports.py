"""Ports: what the use cases need from the outside world. Adapters implement them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.export_window import Position, Window
from sendledger.domain.messages import DueKind, HistoryEntry, Message, MessageState, Transition
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.templates import Rendered


@dataclass(frozen=True)
class StoredResponse:
    """The message as the first request answered it (a replay renders the same view again)."""

    message: Message

    @classmethod
    def of(cls, message: Message) -> StoredResponse:
        """A copy of the message as this answer shows it (later changes do not alter the answer)."""
        return cls(replace(message, history=[]))


@dataclass(frozen=True)
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
    recipient_key: str | None = None  # the address mailed (a request with another replaces it)


@dataclass(frozen=True)
class LastSendCondition:
    """What the intent asserts about the recipient's last-send marker.

    Optimistic (`exact=False`): absent, or not after `value` (None: absent only). Exact: equal
    to `value`, the marker as read (None: absent).
    """

    value: datetime | None = None
    exact: bool = False


@dataclass(frozen=True)
class Expectations:
    """Conditions the intent asserts about recipient state it does not read first."""

    suppression_version: int = 0  # 0: never suppressed
    last_send: LastSendCondition = LastSendCondition()


@dataclass(frozen=True)
class RecipientState:
    suppression: SuppressionState
    last_send_at: datetime | None
    last_message_id: str | None = None
    transient_times: list[datetime] = field(default_factory=list)
    transient_revision: int = 0


@dataclass(frozen=True)
class Replacement:
    """The young active reset a request with another address replaces, and the entry its mail gets."""

    record: ResetRecord
    entry: HistoryEntry


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


@dataclass(frozen=True)
class CreatedPage:
    positions: list[Position]
    more: bool  # entries may follow the last position


@dataclass(frozen=True)
class IntentConflict:
    """The intent was not written; each field reports one failed condition with what is there."""

    existing: IdempotencyRecord | None = None  # the key's message item
    recipient: RecipientState | None = None
    reset: ResetRecord | None = None  # the account's young active reset
    retryable: bool = False  # TransactionConflict / throttling: nothing was written


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


@dataclass
class SuppressionView:
    state: SuppressionState
    history: list[dict[str, Any]] = field(default_factory=list)


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
    ) -> Transition:
        """Conditional state change + history in one write (`unsuppressed`: a recipient key
        that must not be suppressed for the change to land; `unless_evidence`: nor may any
        delivery event have been recorded for the message)."""

    def idempotency_key_of(self, message_id: str) -> str | None: ...

    def created_in(self, owner: str, window: Window, after: Position | None, limit: int) -> CreatedPage:
        """The owner's messages created in `window`, oldest first, from just after `after` (the
        evidence index; never a scan)."""


class RecipientStore(Protocol):
    """Recipients: suppression state (versioned), the last-send marker, transient bounces."""

    def get(self, recipient_key: str) -> RecipientState: ...

    def view(self, recipient_key: str) -> SuppressionView: ...

    def change(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState: ...

    def record_unchanged(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        """Audit an admin act that changes nothing (a repeated suppress or re-enable)."""


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


class PollerStateStore(Protocol):
    """Source watermarks and the SMS log cursor (written by the poller only)."""

    def watermark(self, source: str) -> datetime | None: ...

    def recent_watermark(self, source: str, now: datetime, *, read: bool = True) -> datetime | None:
        """The watermark as read recently (cached per container; only ever behind the truth);
        `read=False`: the cached value only, None when none is recent."""

    def set_watermark(self, source: str, at: datetime) -> None: ...

    def cursor(self, source: str) -> str | None: ...

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None: ...


class EmailSender(Protocol):
    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse: ...


class SmsSender(Protocol):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse: ...


# --- delivery-event ingestion -------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyPlan:
    """What one delivery event does, decided by the domain before the store writes it."""

    message_id: str | None  # None: no message matched (suppression and dedupe still land)
    target: MessageState | None  # the state the event proves, None for history only
    receipt_id: str | None = None  # SMS: SNS's message id; the outcome lands on the send's receipt
    allowed_from: frozenset[MessageState] = frozenset()
    suppress_reason: str | None = None  # suppress the recipient now
    count_transient_reason: str | None = None  # count a transient bounce; suppress at the limit
    transient_limit: int = 3
    transient_window_seconds: int = 7 * 86_400


@dataclass(frozen=True)
class ApplyResult:
    duplicate: bool
    message_updated: bool = False
    prior_state: str | None = None  # the state that refused the update (out of order)
    suppressed_now: bool = False  # this event created the suppression
    already_suppressed: bool = False
    transient_count: int | None = None
    requests: int = 1
    no_receipt: bool = False  # the plan named a receipt that does not exist: nothing was written


@dataclass(frozen=True)
class DueItem:
    kind: DueKind
    message_id: str
    due_at: int
    state: str
    escalation: dict[str, Any] | None = None
    escalation_step: int = 0
    idempotency_key: str | None = None
    receipt_id: str | None = None  # set when the due marker sits on an SMS receipt, not the message
    on_receipt: bool = False  # the marker sits on the message's own receipt (its events set it)
    escalates: bool = False  # the message has an escalation (on a receipt only this flag is copied)


class DeliveryEventStore(Protocol):
    """Applying delivery events once each (their dedupe), and finding an SMS record's send."""

    def apply(self, event: Any, plan: ApplyPlan, now: datetime) -> ApplyResult:
        """One write per new event (a transaction only when it touches the recipient too)."""

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> tuple[str | None, bool]:
        """(message id, already applied): the dedupe item is read in the same BatchGetItem."""


class DueWorkStore(Protocol):
    """What the poller must revisit, by kind and due time."""

    def items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]: ...

    def count(self, kind: DueKind) -> int: ...

    def clear(self, message_id: str, kind: DueKind, receipt_id: str | None = None, on_receipt: bool = False) -> None:
        """Drop the marker (on the message, its receipt, or the SMS receipt under `receipt_id`)."""


class EscalationTimers(Protocol):
    def finish(
        self, message_id: str, entry: HistoryEntry, escalate_message: bool, outcome: str, receipt_id: str | None = None
    ) -> None:
        """Timer done, message escalated (unless it, or its SMS receipt, says delivered), history."""


class EventQueue(Protocol):
    def receive(self, max_messages: int) -> list[QueueMessage]: ...

    def delete(self, messages: list[QueueMessage]) -> list[str]:
        """Delete after apply; returns the ids that could not be deleted."""

    def in_flight(self) -> int:
        """Messages received by another consumer and not yet deleted (push mode)."""


@dataclass(frozen=True)
class QueueMessage:
    message_id: str
    receipt_handle: str
    body: str
    receive_count: int = 1


class EscalationQueue(Protocol):
    def send(self, body: dict[str, Any], deduplication_id: str) -> str: ...


@dataclass(frozen=True)
class LogPage:
    events: list[Any]  # sendledger.domain.sms_events.LogRecord
    next_token: str | None


class LogReader(Protocol):
    def filter(self, log_group: str, start_time_ms: int, next_token: str | None, limit: int) -> LogPage: ...


# --- Status out -------------------------------------------------------------------------------
class StatusChangeSource(Protocol):
    """The ledger's committed writes (stream records) read as status events."""

    def events_of(self, record: dict[str, Any]) -> list[Any]:  # sendledger.domain.state_changes.StatusEvent
        ...


class StatusEventBus(Protocol):
    def put(self, events: Sequence[Any]) -> None:
        """All of them or DependencyUnavailable; putting one again is harmless (same event_id)."""
        ...


class CallbackEndpoint(Protocol):
    def post(self, url: str, body: bytes, headers: dict[str, str], timeout_seconds: float) -> int | None:
        """The HTTP status, or None when there was no answer (timeout, refused, reset)."""
        ...


class CallbackRetries(Protocol):
    def retry_in(self, receipt_handle: str, seconds: int) -> None:
        """Make the queued callback visible again after `seconds` (its next attempt)."""
        ...


class ProviderEventsApi(Protocol):
    """A provider's pull-based event API (Mailgun's Events API): pages, ascending by time."""

    def query(self, params: Mapping[str, str]) -> Any:
        """The first page of a search (sendledger.domain.mailgun_events.EventsPage)."""

    def follow(self, url: str) -> Any:
        """The page a previous page's `next` URL names."""


class TokenClaim(StrEnum):
    CLAIMED = "claimed"  # first use of the token: go on
    SAME_BODY = "same_body"  # the same webhook again (a provider retry): already handled
    REPLAYED = "replayed"  # the token with another body: refuse


class WebhookTokenStore(Protocol):
    """Signed-webhook tokens already used (hashes only), so a captured signature is good once."""

    def claim(self, source: str, token_hash: str, body_hash: str, expires_at: datetime, now: datetime) -> TokenClaim:
        """One conditional write."""

    def release(self, source: str, token_hash: str, body_hash: str) -> None: ...


# --- third-party email providers ----------------------------------------------------------------


class WebhookVerifier(Protocol):
    """A provider's webhook signature check over the bytes as received."""

    def verify(self, timestamp: str, body: bytes, signature: str) -> bool: ...


class EventSink(Protocol):
    """Where verified webhook events wait for the poller (a queue)."""

    def put(self, bodies: list[str]) -> None:
        """Queue every body, or raise DependencyUnavailable (some may be queued: the apply dedupes)."""


@dataclass(frozen=True)
class LookupResult:
    found: bool  # the provider has a message carrying our message id
    provider_message_id: str | None = None
    status: str | None = None


class AcceptanceLookup(Protocol):
    """A provider API that finds a send by sendledger's message id (after a timed-out call)."""

    def lookup(self, message_id: str) -> LookupResult | None:
        """None: the lookup itself failed (nothing is proven either way)."""
