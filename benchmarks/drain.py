"""Drain speedup, measured: the poller draining a queue one event at a time against concurrently.

Latency model: every AWS call takes 10 ms (an in-region round trip): the canned endpoint
(benchmarks/canned.py) waits that long before it answers, on a thread of its own per call, so
concurrent calls overlap as they do against AWS, and nothing is emulated. Both sides run in one
child process with a deployed poller's environment, each on its own composition root that
differs only in POLL_APPLY_CONCURRENCY (1, against the value the stack deploys). A round loads
N SES Delivery events of distinct recipients and times the SES lane's ``usecases.queued_events.drain`` (the
poll cycle's drain: receives, applies and deletes) end to end, wall time. Rounds alternate
which side goes first; the figure is the ratio of the median drain times.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import event_samples
from benchmarks.canned import IN_REGION_ROUND_TRIP_MS, in_poller_child, load_queue
from benchmarks.environment import lambda_environment

EVENTS = 50
ROUNDS = 7
CONCURRENCY_ENV = "POLL_APPLY_CONCURRENCY"


def measure(root: Path, events: int = EVENTS, rounds: int = ROUNDS) -> dict[str, Any]:
    deployed = lambda_environment("sendledger-poller")[CONCURRENCY_ENV]
    return in_poller_child("benchmarks.drain", [str(events), str(rounds), deployed], "DRAIN", IN_REGION_ROUND_TRIP_MS)


def _child(events: int, rounds: int, deployed: int) -> dict[str, Any]:
    from benchmarks.ingest_cpu import drain_ses_queue
    from sendledger import bootstrap
    from sendledger.settings import Settings
    from sendledger.usecases.ingest import IngestReport

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    settings = Settings.from_env()
    sides = {
        "one_at_a_time": bootstrap.build_runtime(settings.replace({"poll_apply_concurrency": 1})),
        "concurrent": bootstrap.build_runtime(settings.replace({"poll_apply_concurrency": deployed})),
    }
    bodies = event_samples.ses_bodies(events)
    walls: dict[str, list[float]] = {name: [] for name in sides}
    for index in range(rounds + 1):  # the first round warms both (clients, pool), unmeasured
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for name in order:
            pipeline = sides[name]
            load_queue(endpoint, bodies)
            report = IngestReport()
            start = time.perf_counter()
            drain_ses_queue(pipeline, lambda: 60.0, report)
            elapsed = time.perf_counter() - start
            if report.applied != events:
                raise RuntimeError(f"{name} applied {report.applied} of {events} events")
            if index:
                walls[name].append(elapsed)
    median = {name: statistics.median(values) for name, values in walls.items()}
    return {
        "method": (
            f"one drain of {events} SES Delivery events of distinct recipients per round, timed end to end; "
            f"{rounds} rounds per side, interleaved"
        ),
        "latency_model": (
            f"every AWS call answered after {IN_REGION_ROUND_TRIP_MS:g} ms by a canned endpoint (nothing emulated)"
        ),
        "events": events,
        "concurrency": {"one_at_a_time": 1, "concurrent": deployed},
        "drain_median_ms": {name: round(value * 1000, 1) for name, value in median.items()},
        "events_per_second": {name: round(events / value, 1) for name, value in median.items()},
        "speedup": round(median["one_at_a_time"] / median["concurrent"], 3),
    }


if __name__ == "__main__":
    found = _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    print("DRAIN " + json.dumps(found), flush=True)
