"""What ingestion and a poll cycle report: counts, settled messages and metric points.

Values at the port: a lane (a provider's slice) writes into the cycle's report what its events
did, and the poller handler emits the metric points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from sendledger import names
from sendledger.domain.clock import iso
from sendledger.domain.sms_guardrails import SmsRefusalReason
from sendledger.domain.values import value

if TYPE_CHECKING:
    from sendledger.domain.messages import MessageState
    from sendledger.ports.ingestion import ApplyResult


@value
class MetricPoint:
    name: str
    value: float
    unit: str  # Powertools MetricUnit value: Milliseconds | Seconds | Count
    dimensions: dict[str, str] = field(default_factory=dict)


def sms_refused_metrics(reason: SmsRefusalReason, count: int = 1) -> list[MetricPoint]:
    """Refused SMS: by reason, and in the total the alarm watches (no caller dimension: the log
    line names the caller, and a dimension per caller would be a metric per caller)."""
    return [
        MetricPoint(names.METRIC_SMS_REFUSED, count, "Count", {"reason": reason.value}),
        MetricPoint(names.METRIC_SMS_REFUSED, count, "Count"),
    ]


@dataclass
class IngestReport:
    applied: int = 0
    duplicates: int = 0
    unmatched: int = 0
    suppressed: int = 0
    poison: int = 0
    failed: int = 0
    metrics: list[MetricPoint] = field(default_factory=list)

    def absorb(self, other: IngestReport) -> None:
        """Add a part's counts (each concurrent apply writes its own report; merged in one thread)."""
        self.applied += other.applied
        self.duplicates += other.duplicates
        self.unmatched += other.unmatched
        self.suppressed += other.suppressed
        self.poison += other.poison
        self.failed += other.failed
        self.metrics.extend(other.metrics)

    def count(self, result: ApplyResult, matched: bool) -> None:
        if result.duplicate:
            self.duplicates += 1
            return
        self.applied += 1
        self.unmatched += 0 if matched else 1
        self.suppressed += 1 if result.suppressed_now else 0


@dataclass(frozen=True)
class Since:
    """A message an earlier event resolved: its state now, and when it left `unknown` (its
    marker falls due later, and the cycle says when the resolution happened, not that it did now)."""

    state: MessageState
    at: datetime


@dataclass(frozen=True)
class Settled:
    """A message a step settled: how (`what`), and for one an earlier event resolved, since when."""

    what: str
    message_id: str
    since: Since | None = None

    def as_json(self) -> dict[str, object]:
        settled: dict[str, object] = {"message_id": self.message_id, "outcome": self.what}
        if self.since is not None:
            settled.update(state=self.since.state.value, since=iso(self.since.at))
        return settled


@dataclass
class CycleReport(IngestReport):
    started_at: datetime | None = None
    read_to_end: dict[str, bool] = field(default_factory=dict)  # by lane: everything there was applied
    resolved: dict[str, int] = field(default_factory=dict)
    resolved_messages: list[Settled] = field(default_factory=list)
    escalated: int = 0
    errors: list[str] = field(default_factory=list)

    def bump(self, what: str, message_id: str | None = None, since: Since | None = None) -> None:
        self.resolved[what] = self.resolved.get(what, 0) + 1
        if message_id is not None:
            self.resolved_messages.append(Settled(what, message_id, since))

    def summary(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "duplicates": self.duplicates,
            "suppressed": self.suppressed,
            "poison": self.poison,
            "read_to_end": self.read_to_end,
            "resolved": self.resolved,
            "resolved_messages": [settled.as_json() for settled in self.resolved_messages],
            "escalated": self.escalated,
        }
