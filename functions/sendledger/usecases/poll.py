"""One poll cycle (EventBridge schedule → poller Lambda), within the Lambda's time budget.

1. each enabled provider's lanes (ports/providers.py EventLane), in the pipeline's order: a queue
   of its events drained (usecases/queued_events.py), a log or an events API read from a cursor
   in DynamoDB, a status poll; each lane that has applied everything before some moment moves
   its source's watermark there (the cycle's start for a queue read to empty);
2. resolve due work (leases, `unknown` after the provider's lookup, `pending`);
3. escalations;
4. metrics: watermark ages and the unknown backlog (the suppression lag is measured per event).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain.clock import iso
from sendledger.domain.messages import DueKind
from sendledger.domain.sms_guardrails import SmsRefusalReason
from sendledger.ports.providers import EventLane
from sendledger.usecases import due_work, escalate
from sendledger.usecases.due_report import Since
from sendledger.usecases.ingest import IngestReport, MetricPoint, Pipeline, sms_refused_metrics
from sendledger.usecases.template_catalog import SHIPPED, TemplateCatalog

logger = Logger(child=True)

SAFETY_SECONDS = 8.0  # stop starting new work this close to the Lambda timeout


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


class CycleFailed(Exception):
    """A step failed; the others ran. Raised at the end so the invocation counts as an error."""

    def __init__(self, report: CycleReport) -> None:
        super().__init__("; ".join(report.errors))
        self.report = report


def poll_cycle(
    pipeline: Pipeline, seconds_left: Callable[[], float], catalog: TemplateCatalog = SHIPPED
) -> CycleReport:
    """One cycle; `catalog` renders resends and fallbacks (the deployment's runtime passes the table's)."""
    services = pipeline.services
    started = services.clock.now()
    report = CycleReport(started_at=started)
    first_error: BaseException | None = None

    def step(name: str, run: Callable[[], None]) -> None:
        nonlocal first_error
        if seconds_left() < SAFETY_SECONDS:
            report.errors.append(f"{name}: out of time")
            return
        try:
            run()
        except Exception as exc:
            logger.exception("poll step failed", extra={"step": name})
            report.errors.append(f"{name}: {type(exc).__name__}")
            first_error = first_error or exc

    def lane_step(lane: EventLane) -> Callable[[], None]:
        def run() -> None:
            report.read_to_end[lane.name] = False
            watermark = lane.run(pipeline, started, seconds_left, report)
            if watermark is not None:
                report.read_to_end[lane.name] = True
                services.poller_state.set_watermark(lane.source, watermark)

        return run

    for lane in pipeline.lanes:
        step(lane.name, lane_step(lane))
    step("due_work", lambda: due_work.resolve_due_work(pipeline, seconds_left, report, catalog))
    step("escalation", lambda: escalate.run_escalations(pipeline, seconds_left, report, catalog))
    step("metrics", lambda: _cycle_metrics(pipeline, report))
    logger.info(
        "poll cycle",
        extra={
            **report.summary(),
            "errors": report.errors,
        },
    )
    if first_error is not None:
        raise CycleFailed(report) from first_error
    return report


def _cycle_metrics(pipeline: Pipeline, report: CycleReport) -> None:
    services = pipeline.services
    now = services.clock.now()
    ages: list[float] = []
    # A source only side paths read (test mode's queue) has no watermark to age: no read for it.
    sources = list(dict.fromkeys(lane.source for lane in pipeline.lanes if lane.completes_source))
    for source in sources:
        watermark = services.poller_state.watermark(source)
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
    backlog = pipeline.due_work.count(DueKind.UNKNOWN)
    report.metrics.append(MetricPoint(names.METRIC_UNKNOWN_BACKLOG, float(backlog), "Count"))
