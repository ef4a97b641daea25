"""Ingestion CPU per applied event: the poller's SES queue drain against a plain boto3 consumer.

Both sides run in one child process (a deployed poller's environment, ``POLL_APPLY_CONCURRENCY``
as deployed) against the canned endpoint (benchmarks/canned.py, another process): the same
SES Delivery events of distinct messages are loaded onto the queue before each round, and a
round is the process CPU time (``process_time``: every thread) of draining them:

- ours: the SES lane's ``usecases.queued_events.drain``, the poll cycle's own drain (receive, parse, dedupe and
  apply through the ingestion routine, delete), on the poller's own runtime;
- the baseline: benchmarks/consumer_baseline.py.

Rounds alternate which side goes first; the bar is the ratio of the medians of CPU per event.
No emulator runs in the measured process, so nothing is subtracted.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import event_samples
from benchmarks.canned import in_poller_child

EVENTS = 100
ROUNDS = 15
WARMUP = 2


def measure(root: Path, events: int = EVENTS, rounds: int = ROUNDS) -> dict[str, Any]:
    return in_poller_child("benchmarks.ingest_cpu", [str(events), str(rounds)], "INGEST")


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


def _child(events: int, rounds: int) -> dict[str, Any]:
    out = _CountingOut()
    sys.stdout = out  # type: ignore[assignment]  # before any logger binds it
    import boto3

    import sendledger.handlers.poller  # noqa: F401 (its logger, writing where a deployed poller's does)
    from benchmarks import consumer_baseline
    from sendledger import bootstrap
    from sendledger.providers.ses.settings import SesSettings
    from sendledger.usecases.ingest import IngestReport

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    pipeline = bootstrap.runtime()
    queue_url = pipeline.settings.provider(SesSettings).events_queue_url
    table = pipeline.settings.table_name
    sqs, dynamodb = boto3.client("sqs"), boto3.client("dynamodb")

    def ours() -> int:
        report = IngestReport()
        drain_ses_queue(pipeline, lambda: 60.0, report)
        return report.applied

    def baseline() -> int:
        return consumer_baseline.drain(sqs, dynamodb, queue_url, table)

    sides = {"sendledger": ours, "baseline": baseline}
    bodies = event_samples.ses_bodies(events)
    samples: dict[str, list[float]] = {name: [] for name in sides}
    logged: list[float] = []
    for index in range(WARMUP + rounds):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for name in order:
            _load(endpoint, bodies)
            gc.collect()
            written = out.bytes
            start = time.process_time()
            applied = sides[name]()
            spent = time.process_time() - start
            if applied != events:
                raise RuntimeError(f"{name} applied {applied} of {events} events")
            if index >= WARMUP:
                samples[name].append(spent * 1000 / events)
                if name == "sendledger":
                    logged.append((out.bytes - written) / events)
    median = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "log_bytes_per_event": round(statistics.median(logged)),
        "publisher": _publisher(out),
        "method": (
            f"{events} SES Delivery events of distinct messages per round, {rounds} rounds per side, interleaved; "
            "process CPU time of the drain per applied event, canned AWS endpoint in another process"
        ),
        "cpu_ms_per_event": {name: round(value, 4) for name, value in median.items()},
        "rounds_ms_per_event": {name: [round(v, 4) for v in values] for name, values in samples.items()},
        "ratio": round(median["sendledger"] / median["baseline"], 3),
        "concurrency": pipeline.settings.poll_apply_concurrency,
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


def _load(endpoint: str, bodies: list[str]) -> None:
    import urllib.request

    request = urllib.request.Request(f"{endpoint}/_load", data=json.dumps(bodies).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass


if __name__ == "__main__":
    found = _child(int(sys.argv[1]), int(sys.argv[2]))
    print("INGEST " + json.dumps(found), file=sys.__stdout__, flush=True)
