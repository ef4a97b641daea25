"""Ingestion CPU per applied event: the poller's SES queue drain against a plain boto3 consumer.

Every side runs in one child process (a deployed poller's environment) against the canned
endpoint (benchmarks/canned.py, another process): the same SES Delivery events of distinct
messages are loaded onto the queue before each round, and a round is the process CPU time
(``process_time``: every thread) of draining them:

- threaded: the SES lane's ``usecases.queued_events.drain``, the poll cycle's own drain (receive,
  parse, dedupe and apply through the ingestion routine, delete), on a composition root with
  ``POLL_APPLY_CONCURRENCY`` as deployed (the figure the bar holds);
- inline: the same drain on a composition root that differs only in a concurrency of 1 (no
  pool: what the pool's hand-off costs, if anything, is the difference);
- the baseline: benchmarks/consumer_baseline.py.

Beside the CPU, each round counts the process's voluntary context switches per event: a thread
that blocks (on a socket, a lock or the GIL) and is woken again. A plain loop blocks about once
per request; threads that take the GIL from one another at every point botocore and urllib3
release it (each send, the pool's connection check, each read) switch several times per event,
and each switch costs CPU, more when the threads run on two cores. The count explains a ratio
that moves with the machine's load.

Information beside the bar, not the bar: one more run against an endpoint that answers every call
after the drain bench's modelled in-region round trip (benchmarks/drain.py), where the threads
overlap the waits they exist for. There a sequential consumer sleeps and wakes once per request,
and the threaded drain's CPU per event falls below both the inline drain's and the baseline's.

Rounds rotate which side goes first. One child is one run; a run's ratio is the median of its
rounds' CPU per event over the baseline's. Runs are separate children (their own interpreter,
endpoint and machine moment), at least RUNS of them; the bar is the median of the runs' ratios,
and their spread is reported beside it. No emulator runs in the measured process, so nothing
is subtracted.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import event_samples
from benchmarks.canned import IN_REGION_ROUND_TRIP_MS, in_poller_child, load_queue
from benchmarks.environment import lambda_environment

EVENTS = 100
ROUNDS = 9  # per side and run
WARMUP = 2
RUNS = 5  # separate children (the bar needs >= 5)
ROUND_TRIP_EVENTS, ROUND_TRIP_ROUNDS = 50, 5  # the run at modelled round trips: information only
CONCURRENCY_ENV = "POLL_APPLY_CONCURRENCY"
SIDES = ("threaded", "inline", "baseline")


def measure(root: Path, events: int = EVENTS, rounds: int = ROUNDS, runs: int = RUNS) -> dict[str, Any]:
    deployed = lambda_environment("sendledger-poller")[CONCURRENCY_ENV]
    found = [
        in_poller_child("benchmarks.ingest_cpu", [str(events), str(rounds), deployed, str(run == 0)], "INGEST")
        for run in range(runs)
    ]
    waited = min(events, ROUND_TRIP_EVENTS), min(rounds, ROUND_TRIP_ROUNDS)
    at_round_trip = in_poller_child(
        "benchmarks.ingest_cpu", [str(waited[0]), str(waited[1]), deployed, "False"], "INGEST", IN_REGION_ROUND_TRIP_MS
    )
    return {**summary(found, events, rounds, int(deployed)), "at_round_trip": _at_round_trip(at_round_trip, *waited)}


def _at_round_trip(run: dict[str, Any], events: int, rounds: int) -> dict[str, Any]:
    return {
        "method": (
            f"one run of {rounds} rounds per side, {events} events each, every AWS call answered after "
            f"{IN_REGION_ROUND_TRIP_MS:g} ms (information, not the bar)"
        ),
        "cpu_ms_per_event": run["cpu_ms_per_event"],
        "ratio": run["ratio"],
        "context_switches_per_event": run["context_switches_per_event"],
    }


def summary(found: list[dict[str, Any]], events: int, rounds: int, deployed: int) -> dict[str, Any]:
    """The runs' ratios, their median and spread; the first run's log and publisher figures."""
    ratios = {side: [run["ratio"][side] for run in found] for side in ("threaded", "inline")}
    cpu = {side: statistics.median(run["cpu_ms_per_event"][side] for run in found) for side in SIDES}
    return {
        **{key: found[0][key] for key in ("log_bytes_per_event", "publisher")},
        "method": (
            f"{events} SES Delivery events of distinct messages per round, {rounds} rounds per side in each of "
            f"{len(found)} runs (a child process each), the sides' order rotating; process CPU time of the drain "
            "per applied event, canned AWS endpoint in another process"
        ),
        "runs": len(found),
        "cpu_ms_per_event": {"sendledger": round(cpu["threaded"], 4), **{s: round(cpu[s], 4) for s in SIDES}},
        "ratio_runs": {side: values for side, values in ratios.items()},
        "ratio": _spread(ratios["threaded"])["median"],
        "ratio_inline": _spread(ratios["inline"])["median"],
        "spread": {side: _spread(values) for side, values in ratios.items()},
        "rounds_ms_per_event": [run["rounds_ms_per_event"] for run in found],
        "context_switches_per_event": {
            side: round(statistics.median(run["context_switches_per_event"][side] for run in found), 2)
            for side in SIDES
        },
        "concurrency": {"threaded": deployed, "inline": 1},
    }


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "range": round(max(values) - min(values), 3),
    }


class _CountingOut:
    """The child's stdout while it measures: the handlers' log lines, counted (Lambda ships them to
    CloudWatch Logs, which bills them by the byte), not kept."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        return


def _child(events: int, rounds: int, deployed: int, publisher: bool) -> dict[str, Any]:
    out = _CountingOut()
    sys.stdout = out  # type: ignore[assignment]  # before any logger binds it
    import boto3

    import sendledger.handlers.poller  # noqa: F401 (its logger, writing where a deployed poller's does)
    from benchmarks import consumer_baseline
    from sendledger import bootstrap
    from sendledger.providers.ses.settings import SesSettings
    from sendledger.settings import Settings
    from sendledger.usecases.ingest import IngestReport

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    settings = Settings.from_env()
    pipelines = {
        "threaded": bootstrap.build_runtime(settings.replace({"poll_apply_concurrency": deployed})),
        "inline": bootstrap.build_runtime(settings.replace({"poll_apply_concurrency": 1})),
    }
    queue_url = settings.provider(SesSettings).events_queue_url
    sqs, dynamodb = boto3.client("sqs"), boto3.client("dynamodb")

    def ours(pipeline: Any) -> Callable[[], int]:
        def drained() -> int:
            report = IngestReport()
            drain_ses_queue(pipeline, lambda: 60.0, report)
            return report.applied

        return drained

    def baseline() -> int:
        return consumer_baseline.drain(sqs, dynamodb, queue_url, settings.table_name)

    sides = {"threaded": ours(pipelines["threaded"]), "inline": ours(pipelines["inline"]), "baseline": baseline}
    bodies = event_samples.ses_bodies(events)
    samples: dict[str, list[float]] = {name: [] for name in sides}
    switches: dict[str, list[float]] = {name: [] for name in sides}
    logged: list[float] = []
    for index in range(WARMUP + rounds):
        shift = index % len(SIDES)
        for name in SIDES[shift:] + SIDES[:shift]:
            load_queue(endpoint, bodies)
            gc.collect()
            written = out.bytes
            switched = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
            start = time.process_time()
            applied = sides[name]()
            spent = time.process_time() - start
            switched = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - switched
            if applied != events:
                raise RuntimeError(f"{name} applied {applied} of {events} events")
            if index >= WARMUP:
                samples[name].append(spent * 1000 / events)
                switches[name].append(switched / events)
                if name == "threaded":
                    logged.append((out.bytes - written) / events)
    median = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "log_bytes_per_event": round(statistics.median(logged)),
        "publisher": _publisher(out) if publisher else None,
        "cpu_ms_per_event": {name: round(value, 4) for name, value in median.items()},
        "rounds_ms_per_event": {name: [round(v, 4) for v in values] for name, values in samples.items()},
        "context_switches_per_event": {name: round(statistics.median(values), 2) for name, values in switches.items()},
        "ratio": {side: round(median[side] / median["baseline"], 3) for side in ("threaded", "inline")},
    }


def _publisher(out: _CountingOut, records: int = 100, rounds: int = 5) -> dict[str, Any]:
    """The status publisher on stream batches of state changes: CPU and log bytes per record."""
    from sendledger import bootstrap
    from sendledger.handlers import publisher

    status = bootstrap.status_out()
    batch = event_samples.stream_batch(records)
    cpu: list[float] = []
    logged: list[float] = []
    for index in range(rounds + 1):
        written, start = out.bytes, time.process_time()
        answer = publisher.lambda_handler(batch, _Context(), runtime=status)
        spent = time.process_time() - start
        if answer.get("batchItemFailures"):
            raise RuntimeError(f"the publisher failed records: {answer}")
        if index:
            cpu.append(spent * 1000 / records)
            logged.append((out.bytes - written) / records)
    return {
        "cpu_ms_per_record": round(statistics.median(cpu), 4),
        "log_bytes_per_record": round(statistics.median(logged)),
    }


class _Context:
    function_name = "sendledger-publisher"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:sendledger-publisher"
    aws_request_id = "00000000-0000-4000-8000-000000000002"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def drain_ses_queue(runtime: Any, seconds_left: Any, report: Any) -> bool:
    """The poll cycle's drain of the SES events queue: its lane's own drain."""
    from sendledger.usecases.queued_events import QueueLane, drain

    [lane] = [lane for lane in runtime.lanes if lane.name == "ses"]
    assert isinstance(lane, QueueLane)
    return drain(runtime.sink, lane, seconds_left, report)


if __name__ == "__main__":
    found = _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "True")
    print("INGEST " + json.dumps(found), file=sys.__stdout__, flush=True)
