"""Due work: each poll cycle's pass over the due markers, expired in-flight leases first, then
`unknown` sends (usecases/resolve_unknown.py), then `pending` retries (usecases/resends.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.clock import Clock
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    MessageState,
    Transition,
)
from sendledger.ports.ingestion import DueWorkStore
from sendledger.ports.messages import MessageStore
from sendledger.ports.reports import CycleReport

if TYPE_CHECKING:  # built by the composition root on first use: a cycle with no such work loads neither
    from sendledger.usecases.resends import Resender
    from sendledger.usecases.resolve_unknown import UnknownResolver

logger = Logger(child=True)

S = MessageState
BATCH = 100
SAFETY_SECONDS = 8.0


@dataclass(frozen=True)
class DueWorkPass:
    """The poll cycle's pass over the due markers: leases, then `unknown`, then `pending`."""

    due_work: DueWorkStore
    messages: MessageStore
    unknown: UnknownResolver
    resender: Resender
    clock: Clock

    def nothing_due(self) -> bool:
        """One read: no marker of any kind due now and no `unknown` at all (this cycle's passes,
        escalations and backlog count have nothing to find; proven only while the index is small)."""
        return self.due_work.nothing_due(self.clock.now())

    def run(self, seconds_left: Callable[[], float], report: CycleReport) -> None:
        now = self.clock.now()
        for item in self.due_work.items(DueKind.INFLIGHT, now, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                return
            self.expire_lease(item.message_id, report)
        for item in self.due_work.items(DueKind.UNKNOWN, now, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                return
            self.unknown.resolve(item.message_id, seconds_left, report)
        for item in self.due_work.items(DueKind.PENDING, now, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                return
            self.resender.retry_pending(item.message_id, seconds_left, report)

    def expire_lease(self, message_id: str, report: CycleReport) -> None:
        """The sender crashed (or timed out) between intent and outcome: the send may have happened."""
        now = self.clock.now()
        entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence={"decision": "unknown"})
        result = self.messages.transition(
            message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now)
        )
        if result is not Transition.APPLIED:
            self.due_work.clear(message_id, DueKind.INFLIGHT)
        report.bump("lease_expired" if result is Transition.APPLIED else "lease_moved_on", message_id)
