"""Infrai: DynamoDB requests and units per send, and per status poll.

Infrai pushes nothing (fixtures/provider-formats/infrai/README.md), so what its leg costs the
ledger is the send (through the `api` handler, the Infrai adapter against the simulated API, in
process) and the poll cycle's status lane asking for every message still in flight. The status
poll is run twice over the same messages: once they are final (each status applied, the marker
dropped, or for a delivery turned into a complaint marker), and once more before anything changed
(nothing left to ask: the lane's floor). Then once the first complaint read is due: what one read
of a delivered message costs, which the README multiplies by the reads of the complaint schedule.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks import ours
from benchmarks.aws import World
from benchmarks.counting import counting
from benchmarks.event_feed import EMAIL_OUTCOMES

SENDS = 30
RRU = "read_request_units"


class _Clock:
    """The simulator's and the use case's time: real, plus what the benchmark skips ahead."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _units(log: Any, kind: str = "write_request_units") -> float:
    return float(sum(r.capacity.get(kind, 0.0) for r in log.requests))


def measure(world: World, simulator: Any) -> dict[str, Any]:
    from local.simulator.http import InProcessHttp
    from local.simulator.providers.infrai import side_of
    from sendledger import bootstrap
    from sendledger.domain.provider import Provider
    from sendledger.domain.recipients import Channel
    from sendledger.providers.infrai.client import InfraiClient
    from sendledger.providers.infrai.lane import status_lane
    from sendledger.providers.infrai.sender import InfraiSender
    from sendledger.providers.infrai.settings import InfraiSettings
    from sendledger.usecases.poll import CycleReport

    clock = _Clock()
    side = side_of(simulator)
    http = InProcessHttp(side.handle)
    client = InfraiClient("https://infrai.simulator.invalid/v1", lambda: side.api_key, http)
    runtime = bootstrap.runtime()
    services = runtime
    saved = (services.email, services.settings, services.clock, simulator.clock)
    services.email = InfraiSender(client, Channel.EMAIL)
    services.settings = services.settings.replace({"email_provider": Provider.INFRAI}).configure_provider(
        InfraiSettings, status_interval_seconds=1, statuses_per_cycle=SENDS
    )
    services.clock = clock
    simulator.clock = clock.now
    lane = status_lane(services.settings, runtime.lane_stores, client)
    try:
        world.refresh_watermarks()
        run = uuid.uuid4().hex[:8]
        addresses = list(EMAIL_OUTCOMES.values())
        sends: list[tuple[int, float]] = []
        for i in range(SENDS):
            local, _, domain = addresses[i % len(addresses)].partition("@")
            with counting(ours.ledger()) as log:
                status, _, body = ours.post(
                    "/v1/messages", ours.email_body(f"{local}+{run}{i}@{domain}"), key=f"ifr-{run}-{i}"
                )
            if status != 202:
                raise RuntimeError(f"Infrai send {i} failed: {status} {body}")
            sends.append((log.total, _units(log)))
        clock.offset += timedelta(seconds=5)  # every simulated status is final now
        passes = []
        for skip in (0, 0, services.settings.provider(InfraiSettings).complaint_first_read_seconds + 1):
            clock.offset += timedelta(seconds=skip)  # the third pass: the first complaint read is due
            asked = len(http.requests)
            report = CycleReport()
            with counting(ours.ledger()) as log:
                lane.run(runtime.sink, clock.now(), lambda: 60.0, report)
            passes.append((log.total, _units(log), len(http.requests) - asked, report.applied, _units(log, RRU)))
    finally:
        services.email, services.settings, services.clock, simulator.clock = saved
    (final_requests, final_wru, gets, applied, _), (floor_requests, floor_wru, floor_gets, _, floor_rru) = passes[:2]
    # What a read adds to a cycle: the cycle's own queries of the due index are the idle pass's.
    read_requests, read_wru, reads, _, read_rru = passes[2]
    read_requests, read_rru = read_requests - floor_requests, read_rru - floor_rru
    schedule = services.settings.provider(InfraiSettings).complaint_schedule()
    return {
        "method": "the api handler with the Infrai adapter, then its status lane, against the simulated API",
        "sends": SENDS,
        "send": {
            "requests_max": max(r for r, _ in sends),
            "requests_per_send": round(sum(r for r, _ in sends) / SENDS, 3),
            "wru_max": max(w for _, w in sends),
            "wru_per_send": round(sum(w for _, w in sends) / SENDS, 3),
        },
        "status_poll": {
            "messages_asked": gets,
            "statuses_applied": applied,
            "requests": final_requests,
            "requests_per_message": round(final_requests / gets, 3) if gets else None,
            "wru_per_message": round(final_wru / gets, 3) if gets else None,
            "idle_pass": {"requests": floor_requests, "wru": floor_wru, "rru": floor_rru, "asked": floor_gets},
        },
        "complaint_read": {
            "messages_read": reads,
            "requests_per_read": round(read_requests / reads, 3) if reads else None,
            "wru_per_read": round(read_wru / reads, 3) if reads else None,
            "rru_per_read": round(read_rru / reads, 3) if reads else None,
            "reads_per_delivery": len(schedule.read_offsets()),
            "schedule": {
                "first_read_seconds": schedule.first_read_seconds,
                "max_interval_seconds": schedule.max_interval_seconds,
                "horizon_seconds": schedule.horizon_seconds,
            },
        },
    }
