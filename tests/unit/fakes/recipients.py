"""The recipient item: suppression state (versioned), the last-send marker, transient bounces."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sendledger.domain.clock import iso
from sendledger.domain.eligibility import RecordedSend, SuppressionState
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import HistoryEntry, HistoryType
from sendledger.ports.messages import Expectations, RecordLastSend
from sendledger.ports.recipients import RecipientState, SuppressionView
from tests.unit.fakes.history import History, ms
from tests.unit.fakes.state import LedgerState


@dataclass
class RecipientItem:
    suppressed: bool = False
    version: int = 0  # 0: the attribute is absent (never suppressed); every change adds one
    reason: str | None = None
    since: datetime | None = None
    source_event: str | None = None
    last_send_at: datetime | None = None
    last_message_id: str | None = None
    recorded: RecordedSend | None = None  # what an `allow` send's update recorded for its label
    transient_times: list[datetime] = field(default_factory=list)
    transient_revision: int = 0
    history: History = field(default_factory=History)

    def state(self) -> RecipientState:
        return RecipientState(
            SuppressionState(self.suppressed, self.version, self.reason, self.since),
            self.last_send_at,
            self.last_message_id,
            transient_times=list(self.transient_times),
            transient_revision=self.transient_revision,
        )

    def suppress(self, reason: str, source_event: str, now: datetime) -> None:
        self.version += 1
        self.suppressed, self.reason, self.since, self.source_event = True, reason, ms(now), source_event


def state_of(db: LedgerState, recipient_key: str) -> RecipientState:
    return db.recipients.get(recipient_key, RecipientItem()).state()


def recent_sends(db: LedgerState, recipient_key: str) -> list[tuple[str, datetime]]:
    """The last send and (an `allow` send recorded it) the one before, the newest first."""
    item = db.recipients.get(recipient_key)
    if item is None or item.last_message_id is None or item.last_send_at is None:
        return []
    found = [(item.last_message_id, item.last_send_at)]
    recorded = item.recorded
    if recorded is not None and recorded.previous_message_id and recorded.previous_send_at:
        found.append((recorded.previous_message_id, recorded.previous_send_at))
    return found


def item_of(db: LedgerState, recipient_key: str) -> RecipientItem:
    """The item, created by the write that needs it (an UpdateItem creates what is absent)."""
    return db.recipients.setdefault(recipient_key, RecipientItem())


def is_suppressed(db: LedgerState, recipient_key: str) -> bool:
    item = db.recipients.get(recipient_key)
    return item is not None and item.suppressed


def refuses_send(db: LedgerState, recipient_key: str, expect: Expectations) -> RecipientState | None:
    """The recipient as it is when the send's condition fails (recipients.for_send), else None."""
    item = db.recipients.get(recipient_key, RecipientItem())
    if expect.suppression_version == 0:
        eligible = item.version == 0
    else:
        eligible = item.version == expect.suppression_version and not item.suppressed
    marker, condition = item.last_send_at, expect.last_send
    if isinstance(condition, RecordLastSend):
        knowable = True  # no condition: the label is derived from what the update records
    elif condition.value is None:
        knowable = marker is None
    elif condition.exact:
        knowable = marker == ms(condition.value)
    else:
        knowable = marker is None or marker <= ms(condition.value)
    return None if eligible and knowable else item.state()


def mark_sent(db: LedgerState, recipient_key: str, at: datetime, message_id: str, expect: Expectations) -> None:
    item = item_of(db, recipient_key)
    item.recorded = None
    if isinstance(expect.last_send, RecordLastSend):
        cutoff = ms(expect.last_send.stale_after) if expect.last_send.stale_after else None
        item.recorded = RecordedSend(message_id, ms(at), item.last_send_at, item.last_message_id, cutoff)
    item.last_send_at, item.last_message_id = ms(at), message_id


class FakeRecipients:
    def __init__(self, db: LedgerState) -> None:
        self.db = db

    def get(self, recipient_key: str) -> RecipientState:
        return state_of(self.db, recipient_key)

    def view(self, recipient_key: str) -> SuppressionView:
        item = self.db.recipients.get(recipient_key, RecipientItem())
        return SuppressionView(
            state=item.state().suppression,
            history=[{"at": iso(e.at), "type": e.type.value, **e.evidence} for e in item.history.entries()],
        )

    def change(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState:
        with self.db.lock:
            item = self._at_version(recipient_key, expected_version)
            item.version = expected_version + 1
            item.suppressed, item.reason, item.since, item.source_event = suppressed, reason, ms(now), f"admin:{actor}"
            evidence = {"actor": actor, "reason": reason, "version": item.version}
            item.history.append(_admin_entry(suppressed, now, evidence, item.version))
            return SuppressionState(suppressed=suppressed, version=item.version, reason=reason, since=now)

    def record_unchanged(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        with self.db.lock:
            item = self._at_version(recipient_key, version)
            evidence = {"actor": actor, "reason": reason, "version": version, "unchanged": True}
            item.history.append(_admin_entry(suppressed, now, evidence, version))

    def _at_version(self, recipient_key: str, version: int) -> RecipientItem:
        if self.db.recipients.get(recipient_key, RecipientItem()).version != version:
            raise DependencyUnavailable("suppression changed concurrently; retry", retry_after_seconds=1)
        return item_of(self.db, recipient_key)


def _admin_entry(suppressed: bool, now: datetime, evidence: dict[str, Any], version: int) -> HistoryEntry:
    return HistoryEntry(
        at=now,
        type=HistoryType.SUPPRESSED if suppressed else HistoryType.UNSUPPRESSED,
        evidence={**evidence, "source": "admin"},
        step=version % 100,
    )
