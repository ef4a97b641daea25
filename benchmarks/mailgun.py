"""Mailgun events: DynamoDB requests and units per event, as the poll step applies them.

Messages are sent through the `api` handler with the Mailgun adapter against the local Mailgun
simulator (local/simulator/mailgun.py, over HTTP), its Events API is read with the production
reader, and each parsed item is applied by the one ingestion routine, once new and once again
(the finality pass reads every event a second time: a duplicate). The poll step itself is then
run over a fresh batch, both passes, to give the requests per event including the cursor's.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks import ours
from benchmarks.aws import World
from benchmarks.counting import counting
from benchmarks.event_feed import EMAIL_OUTCOMES, event_figure

FINAL_AFTER_SECONDS = 60


class _Clock:
    """The simulator's and the use case's time: real, plus what the benchmark skips ahead."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def measure(world: World) -> dict[str, Any]:
    from local.simulator.providers.mailgun import DEFAULT_DOMAIN, LOCAL_API_KEY, MailgunSimulator
    from sendledger import bootstrap
    from sendledger.domain.provider import Provider
    from sendledger.providers.mailgun.events_api import MailgunEventsApi
    from sendledger.providers.mailgun.lane import events_lane, poll_mailgun
    from sendledger.providers.mailgun.sender import MailgunEmailSender
    from sendledger.providers.mailgun.settings import MailgunSettings
    from sendledger.usecases.ingest import IngestReport

    clock = _Clock()
    simulator = MailgunSimulator(clock=clock.now, late_seconds=0)
    url = simulator.serve()
    runtime = bootstrap.runtime()
    services = runtime
    saved = (services.email, services.settings, services.clock)
    services.email = MailgunEmailSender(url, DEFAULT_DOMAIN, "bench@mg.example.com", lambda: LOCAL_API_KEY)
    services.settings = services.settings.replace({"email_provider": Provider.MAILGUN}).configure_provider(
        MailgunSettings, events_final_after_seconds=FINAL_AFTER_SECONDS
    )
    services.clock = clock
    pipeline = runtime.sink
    events_api = MailgunEventsApi(url, DEFAULT_DOMAIN, lambda: LOCAL_API_KEY)
    lane = events_lane(runtime.settings, runtime.lane_stores, events_api)
    try:
        world.refresh_watermarks()
        run = uuid.uuid4().hex[:8]
        begin = clock.now() - timedelta(seconds=5)
        outcomes = {**EMAIL_OUTCOMES, "suppressionlist": "suppressionlist@simulator.amazonses.com"}
        for outcome, address in outcomes.items():
            status, _, body = ours.post("/v1/messages", ours.email_body(address), key=f"mg-{run}-{outcome}")
            if status != 202:
                raise RuntimeError(f"send to {address} failed: {status} {body}")
        clock.offset += timedelta(seconds=10)  # every outcome event is visible now
        page = events_api.query({"begin": str(int(begin.timestamp())), "ascending": "yes"})
        new: list[dict[str, Any]] = []
        duplicate: list[dict[str, Any]] = []
        for item in page.items:
            event = item.event
            if event is None:
                continue
            kind = f"mailgun:{event.evidence['provider_event']}" + (
                f"/{event.evidence['reason']}" if event.evidence.get("reason") else ""
            )
            for into in (new, duplicate):
                with counting(ours.ledger()) as log:
                    services.sink.apply(event, IngestReport())
                into.append(event_figure(log, kind, None))
        if not new:
            raise RuntimeError("the Mailgun simulator produced no events")
        step = _poll_step(world, services, pipeline, clock, run, lambda *args: poll_mailgun(args[0], lane, *args[1:]))
    finally:
        services.email, services.settings, services.clock = saved
        simulator.stop()
    return {
        "method": "Events API items (production reader, simulator over HTTP) applied by the ingestion routine",
        "new": new,
        "duplicate": duplicate,
        "poll_step": step,
    }


def _poll_step(world: World, services: Any, pipeline: Any, clock: _Clock, run: str, poll: Any) -> dict[str, Any]:
    """Both passes over a fresh batch: the live pass applies, the finality pass re-reads."""
    from sendledger.usecases.ingest import IngestReport

    clock.offset += timedelta(seconds=FINAL_AFTER_SECONDS + 10)  # earlier events final: read by the settle
    poll(pipeline, clock.now(), lambda: 60.0, IngestReport())  # settle: both cursors at the present
    sends = 30
    addresses = list(EMAIL_OUTCOMES.values())
    for i in range(sends):
        local, _, domain = addresses[i % len(addresses)].partition("@")
        ours.post("/v1/messages", ours.email_body(f"{local}+{run}{i}@{domain}"), key=f"mg-step-{run}-{i}")
    clock.offset += timedelta(seconds=10)
    report = IngestReport()
    with counting(ours.ledger()) as live:
        poll(pipeline, clock.now(), lambda: 60.0, report)
    clock.offset += timedelta(seconds=FINAL_AFTER_SECONDS + 10)
    again = IngestReport()
    with counting(ours.ledger()) as final:
        poll(pipeline, clock.now(), lambda: 60.0, again)
    events = report.applied + report.duplicates
    total = live.total + final.total
    return {
        "events": events,
        "applied_by_live_pass": report.applied,
        "duplicates_on_finality_pass": again.duplicates,
        "requests_live_pass": live.total,
        "requests_finality_pass": final.total,
        "requests_per_event": round(total / events, 3) if events else None,
        "write_request_units_per_event": round(
            sum(r.capacity.get("write_request_units", 0.0) for r in [*live.requests, *final.requests]) / events, 3
        )
        if events
        else None,
    }
