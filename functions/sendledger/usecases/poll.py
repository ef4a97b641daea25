"""One poll cycle (EventBridge schedule → poller Lambda), within the Lambda's time budget.

1. each enabled provider's lanes (ports/providers.py EventLane), in the composition root's order: a queue
   of its events drained (usecases/queued_events.py), a log or an events API read from a cursor
   in DynamoDB, a status poll; each lane that has applied everything before some moment moves
   its source's watermark there (the cycle's start for a queue read to empty);
2. resolve due work (leases, `unknown` after the provider's lookup, `pending`);
3. escalations;
4. metrics: watermark ages and the unknown backlog (the suppression lag is measured per event).

Steps 2 and 3 and the backlog count start with one read: when it proves nothing due of any kind
and no `unknown` at all (a quiet deployment's every cycle), they ask nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain.clock import Clock
from sendledger.domain.messages import DueKind
from sendledger.domain.sms_guardrails import SmsRefusalReason
from sendledger.ports.ingestion import DueWorkStore
from sendledger.ports.poller_state import PollerStateStore
from sendledger.ports.providers import EventLane, EventSink
from sendledger.ports.reports import CycleReport, MetricPoint, sms_refused_metrics
from sendledger.usecases.due_work import DueWorkPass
from sendledger.usecases.escalate import Escalations

logger = Logger(child=True)

SAFETY_SECONDS = 8.0  # stop starting new work this close to the Lambda timeout


class CycleFailed(Exception):
    """A step failed; the others ran. Raised at the end so the invocation counts as an error."""

    def __init__(self, report: CycleReport) -> None:
        super().__init__("; ".join(report.errors))
        self.report = report


@dataclass(frozen=True)
class CycleMetrics:
    """The cycle's last step: each source's watermark age and the unknown backlog."""

    sources: Sequence[str]  # the sources a complete lane moves the watermark of
    poller_state: PollerStateStore
    due_work: DueWorkStore
    clock: Clock

    def run(self, report: CycleReport, moved: Mapping[str, datetime] | None = None, no_unknown: bool = False) -> None:
        """`moved`: the watermarks this cycle set, by source (no read: at least that recent);
        `no_unknown`: the cycle proved the backlog empty."""
        now, moved = self.clock.now(), moved or {}
        ages: list[float] = []
        for source in self.sources:
            watermark = moved.get(source) or self.poller_state.watermark(source)
            if watermark is None:
                continue
            age = max(0.0, (now - watermark).total_seconds())
            ages.append(age)
            report.metrics.append(MetricPoint(names.METRIC_WATERMARK_AGE_SECONDS, age, "Seconds", {"source": source}))
        if ages:
            # The alarm watches the worst source under the service dimension only.
            report.metrics.append(MetricPoint(names.METRIC_WATERMARK_AGE_SECONDS, max(ages), "Seconds"))
        for reason in SmsRefusalReason:  # escalation fallbacks and resends the owner's rules refused
            refused = report.resolved.get(f"sms_refused_{reason.value}")
            if refused:
                report.metrics += sms_refused_metrics(reason, refused)
        backlog = 0 if no_unknown else self.due_work.count(DueKind.UNKNOWN)
        report.metrics.append(MetricPoint(names.METRIC_UNKNOWN_BACKLOG, float(backlog), "Count"))


def watermark_sources(lanes: Sequence[EventLane]) -> list[str]:
    """A source only side paths read (test mode's queue) has no watermark to age: no read for it."""
    return list(dict.fromkeys(lane.source for lane in lanes if lane.completes_source))


@dataclass(frozen=True)
class PollCycle:
    """One poll cycle's steps, in order; a step that fails or finds no time left does not stop the rest."""

    lanes: Sequence[EventLane]
    sink: EventSink
    watermarks: PollerStateStore  # each lane's source, moved when the lane applied everything
    due_work: DueWorkPass
    escalations: Escalations
    metrics: CycleMetrics
    clock: Clock

    def run(self, seconds_left: Callable[[], float]) -> CycleReport:
        started = self.clock.now()
        report = CycleReport(started_at=started)
        moved: dict[str, datetime] = {}  # the watermarks this cycle set, by source
        quiet = False  # the due-work step's first read proved nothing due of any kind and no `unknown`

        def due_work() -> None:
            nonlocal quiet
            quiet = self.due_work.nothing_due()
            if not quiet:
                self.due_work.run(seconds_left, report)

        def escalations() -> None:
            if not quiet:
                self.escalations.run(seconds_left, report)

        steps: list[tuple[str, Callable[[], None]]] = [
            *((lane.name, self._lane_step(lane, started, seconds_left, report, moved)) for lane in self.lanes),
            ("due_work", due_work),
            ("escalation", escalations),
            ("metrics", lambda: self.metrics.run(report, moved, no_unknown=quiet)),
        ]
        first_error: BaseException | None = None
        for name, run in steps:
            if seconds_left() < SAFETY_SECONDS:
                report.errors.append(f"{name}: out of time")
                continue
            try:
                run()
            except Exception as exc:
                logger.exception("poll step failed", extra={"step": name})
                report.errors.append(f"{name}: {type(exc).__name__}")
                first_error = first_error or exc
        logger.info("poll cycle", extra={**report.summary(), "errors": report.errors})
        if first_error is not None:
            raise CycleFailed(report) from first_error
        return report

    def _lane_step(
        self,
        lane: EventLane,
        started: datetime,
        seconds_left: Callable[[], float],
        report: CycleReport,
        moved: dict[str, datetime],
    ) -> Callable[[], None]:
        def run() -> None:
            report.read_to_end[lane.name] = False
            watermark = lane.run(self.sink, started, seconds_left, report)
            if watermark is not None:
                report.read_to_end[lane.name] = True
                self.watermarks.set_watermark(lane.source, watermark)
                moved[lane.source] = max(watermark, moved.get(lane.source, watermark))

        return run
