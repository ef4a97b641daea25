"""Delivery-event ingestion: applying events once each, the due work the poller revisits, its queues and logs."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from sendledger.domain.escalation import Escalation
from sendledger.domain.event_plan import EventPlan
from sendledger.domain.messages import DueKind, HistoryEntry
from sendledger.domain.values import value


@value
class ApplyResult:
    duplicate: bool
    message_updated: bool = False
    prior_state: str | None = None  # the state that refused the update (out of order)
    suppressed_now: bool = False  # this event created the suppression
    already_suppressed: bool = False
    transient_count: int | None = None
    requests: int = 1
    no_receipt: bool = False  # the plan named a receipt that does not exist: nothing was written


class SmsMatch(StrEnum):
    """How a status record whose receipt was missing found its send (or did not)."""

    RECEIPT = "receipt"  # the receipt has landed since: the record goes there
    PROVIDER_ID = "provider_id"  # its receipt names the send, or (receipt still to come) a recent send names the id
    UNKNOWN_ID = "unknown_id"  # the number's send in the window whose Publish answer was never recorded
    NONE = "none"  # no send to the number names the id or could


@value
class SmsSendFound:
    match: SmsMatch
    message_id: str | None
    applied: bool  # the dedupe item exists: the record was applied already
    last_send_at: datetime | None = None  # the number's last send (NONE: was it recent enough to be pending?)
    requests: int = 1  # the reads it took


class DeliveryEventStore(Protocol):
    """Applying delivery events once each (their dedupe), and finding an SMS record's send."""

    def apply(self, plan: EventPlan) -> ApplyResult:
        """Write what the domain planned: one request per new event (a transaction only when it
        touches the recipient too), narrowed by the plan when a condition fails."""

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> SmsSendFound:
        """The send a record without receipt belongs to: the receipt, the destination and the
        dedupe item in one BatchGetItem, then the destination's recent sends (one more) to
        compare their provider message ids with the record's."""


@value
class DueItem:
    kind: DueKind
    message_id: str
    due_at: int
    state: str
    escalation: Escalation | None = None
    idempotency_key: str | None = None
    receipt_id: str | None = None  # set when the due marker sits on an SMS receipt, not the message
    on_receipt: bool = False  # the marker sits on the message's own receipt (its events set it)
    escalates: bool = False  # the message has an escalation (on a receipt only this flag is copied)


class DueWorkStore(Protocol):
    """What the poller must revisit, by kind and due time."""

    def items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]: ...

    def count(self, kind: DueKind) -> int: ...

    def nothing_due(self, until: datetime) -> bool:
        """True only when one read proves it: no item of any kind due by `until`, and no `unknown`
        at all; False also when that read cannot tell (each pass then asks for its own kind)."""

    def clear(self, message_id: str, kind: DueKind, receipt_id: str | None = None, on_receipt: bool = False) -> None:
        """Drop the marker (on the message, its receipt, or the SMS receipt under `receipt_id`)."""

    def reschedule(self, message_id: str, kind: DueKind, due_at: datetime, was: DueKind | None = None) -> None:
        """The message's marker of `kind` (or of `was`, which it becomes `kind`) comes due at `due_at`
        (none, or another kind: no change)."""


class EscalationTimers(Protocol):
    def finish(
        self, message_id: str, entry: HistoryEntry, escalate_message: bool, outcome: str, receipt_id: str | None = None
    ) -> None:
        """Timer done, message escalated (unless it, or its SMS receipt, says delivered), history."""


@value
class QueueMessage:
    message_id: str
    receipt_handle: str
    body: str
    receive_count: int = 1


class EventQueue(Protocol):
    def receive(self, max_messages: int) -> list[QueueMessage]: ...

    def delete(self, messages: list[QueueMessage]) -> list[str]:
        """Delete after apply; returns the ids that could not be deleted."""

    def in_flight(self) -> int:
        """Messages received by another consumer and not yet deleted (push mode)."""


class EscalationQueue(Protocol):
    def send(self, body: dict[str, Any], deduplication_id: str) -> str: ...
