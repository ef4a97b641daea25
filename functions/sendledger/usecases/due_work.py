"""Due work: each poll cycle's pass over the due markers, expired in-flight leases first, then
`unknown` sends (usecases/resolve_unknown.py), then `pending` retries (usecases/resends.py)."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools import Logger

from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    MessageState,
    Transition,
)
from sendledger.usecases.due_report import Counter
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.resends import retry_pending
from sendledger.usecases.resolve_unknown import resolve_unknown
from sendledger.usecases.template_catalog import SHIPPED, TemplateCatalog

logger = Logger(child=True)

S = MessageState
BATCH = 100
SAFETY_SECONDS = 8.0


def resolve_due_work(
    pipeline: Pipeline, seconds_left: Callable[[], float], report: Counter, catalog: TemplateCatalog = SHIPPED
) -> None:
    now = pipeline.services.clock.now()
    due_work = pipeline.due_work
    for item in due_work.items(DueKind.INFLIGHT, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        expire_lease(pipeline, item.message_id, report)
    for item in due_work.items(DueKind.UNKNOWN, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        resolve_unknown(pipeline, item.message_id, seconds_left, report, catalog)
    for item in due_work.items(DueKind.PENDING, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        retry_pending(pipeline, item.message_id, seconds_left, report, catalog)


def expire_lease(pipeline: Pipeline, message_id: str, report: Counter) -> None:
    """The sender crashed (or timed out) between intent and outcome: the send may have happened."""
    now = pipeline.services.clock.now()
    entry = HistoryEntry(at=now, type=HistoryType.LEASE_EXPIRED, state=S.UNKNOWN, evidence={"decision": "unknown"})
    result = pipeline.services.messages.transition(
        message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry], (DueKind.UNKNOWN, now)
    )
    if result is not Transition.APPLIED:
        pipeline.due_work.clear(message_id, DueKind.INFLIGHT)
    report.bump("lease_expired" if result is Transition.APPLIED else "lease_moved_on", message_id)
