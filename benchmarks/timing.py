"""Send wall time, ours vs the baseline: same process, same moto, interleaved, medians.

Measured twice. In-process (``mock_aws``): each sample is split into the time spent inside
moto's request emulation (``BotocoreStubber.process_request``: what AWS would do server-side),
itemised per operation, and the rest (the Lambda's own work: handler, validation, SDK
serialisation). The Lambda's CPU (the bar) is process CPU time (``time.process_time``) minus the
CPU time spent inside moto's stubbed send (emulation and its serializing lock), so other load on
the machine does not inflate it. Over HTTP (moto's server in a thread, the wall-time bar): every
request also pays a socket round trip and the wire format both ways, as every deployed request
does.

moto's emulation is not DynamoDB's latency: a TransactWriteItems item costs moto about what a
whole PutItem does (condition parsing, update-expression validation, plus a rollback copy of
the table per item), so in moto a transaction costs the sum of its items.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks import baseline, ours
from benchmarks.aws import World

WARMUP = 5


@dataclass(frozen=True)
class Sample:
    wall: float  # seconds
    emulation: float  # wall seconds inside moto's in-process emulation
    cpu: float  # process CPU seconds
    emulation_cpu: float  # process CPU seconds inside moto's emulation

    @property
    def lambda_cpu(self) -> float:
        """CPU time outside the AWS emulation: what the Lambda itself would spend."""
        return self.cpu - self.emulation_cpu


Samples = list[Sample]


class EmulatorMeter:
    """Accumulates the time spent in moto's in-process request handling: wall time per operation,
    and the calling threads' CPU.

    Wall time is taken around the emulation itself (``BotocoreStubber.process_request``). CPU is
    taken around the whole stubbed send (``BotocoreStubber.__call__``), which also holds the
    wait for the lock that makes in-process moto take one request at a time
    (local/moto_serial.py): on a machine where blocking and waking a thread costs tens of
    microseconds, a poller's threads queueing for that lock spend CPU that DynamoDB, which does
    not serialize independent requests, would never cause.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.lock = threading.Lock()
        self.by_operation: dict[str, list[float]] = {}
        self.recording: str | None = None  # "ours" | "baseline" while a timed send runs

    @contextlib.contextmanager
    def installed(self) -> Iterator[EmulatorMeter]:
        from moto.core.botocore_stubber import BotocoreStubber

        original_process, original_call = BotocoreStubber.process_request, BotocoreStubber.__call__
        meter = self

        def process_request(stubber: Any, request: Any) -> Any:
            start = time.perf_counter()
            try:
                return original_process(stubber, request)
            finally:
                elapsed = time.perf_counter() - start
                with meter.lock:
                    meter.seconds += elapsed
                if meter.recording:
                    key = f"{meter.recording} {_operation(request)}"
                    meter.by_operation.setdefault(key, []).append(elapsed)

        def call(stubber: Any, *args: Any, **kwargs: Any) -> Any:
            # The calling thread's CPU, not the process's: a poller applies events on worker
            # threads, and another thread's work during this request is not moto's.
            start_cpu = time.thread_time()
            try:
                return original_call(stubber, *args, **kwargs)
            finally:
                spent = time.thread_time() - start_cpu
                with meter.lock:
                    meter.cpu_seconds += spent

        BotocoreStubber.process_request = process_request  # type: ignore[method-assign,assignment]
        BotocoreStubber.__call__ = call  # type: ignore[method-assign]
        try:
            yield self
        finally:
            BotocoreStubber.process_request = original_process  # type: ignore[method-assign]
            BotocoreStubber.__call__ = original_call  # type: ignore[method-assign]


def _operation(request: Any) -> str:
    """DynamoDB names its operation in X-Amz-Target; SES v2 in the path (outbound-emails)."""
    target = request.headers.get("X-Amz-Target") or b""
    if isinstance(target, bytes):
        target = target.decode()
    if target:
        return str(target).rpartition(".")[2]
    return "SendEmail" if str(request.url).endswith("/outbound-emails") else str(request.url).rpartition("/")[2]


def _timed(call: Callable[[], tuple[int, dict[str, Any]]], meter: EmulatorMeter, side: str) -> Sample:
    before, before_cpu = meter.seconds, meter.cpu_seconds
    meter.recording = side
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        status, body = call()
    finally:
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        meter.recording = None
    if status != 202 or body.get("state") != "accepted":
        raise RuntimeError(f"timed send failed: {status} {body}")
    return Sample(elapsed, meter.seconds - before, cpu, meter.cpu_seconds - before_cpu)


def _interleaved(
    world: World, handler: baseline.Handler, samples: int, meter: EmulatorMeter
) -> tuple[Samples, Samples]:
    """Alternate which side goes first on every round: drift and cache effects hit both."""
    for i in range(WARMUP):
        world.empty_tables()
        world.refresh_watermarks()
        ours.send_email(i, "warmup")
        baseline.send_email(handler, i, "warmup")
    mine: Samples = []
    theirs: Samples = []
    for i in range(samples):
        # Outside the timed window: moto snapshots whole tables per transaction item, so keep
        # every table (ours and the baseline's) at its minimal state; fresh watermarks keep
        # the optimistic eligibility path (the 2-request send).
        world.empty_tables()
        world.refresh_watermarks()
        gc.collect()
        run_ours = lambda i=i: ours.send_email(i, "timed")  # noqa: E731
        run_base = lambda i=i: baseline.send_email(handler, i, "timed")  # noqa: E731
        if i % 2 == 0:
            mine.append(_timed(run_ours, meter, "ours"))
            theirs.append(_timed(run_base, meter, "baseline"))
        else:
            theirs.append(_timed(run_base, meter, "baseline"))
            mine.append(_timed(run_ours, meter, "ours"))
    return mine, theirs


def _wall(mine: Samples, theirs: Samples, samples: int) -> dict[str, Any]:
    wall_ours = statistics.median(s.wall for s in mine)
    wall_base = statistics.median(s.wall for s in theirs)
    return {
        "samples_each": samples,
        "order": "interleaved, alternating which side runs first",
        "ours_median_ms": _ms(wall_ours),
        "baseline_median_ms": _ms(wall_base),
        "ours_p90_ms": _ms(_quantile([s.wall for s in mine], 0.9)),
        "baseline_p90_ms": _ms(_quantile([s.wall for s in theirs], 0.9)),
        "ratio_of_medians": round(wall_ours / wall_base, 4),
        "median_of_paired_ratios": round(
            statistics.median(a.wall / b.wall for a, b in zip(mine, theirs, strict=True)), 4
        ),
    }


def send_time_ratio(world: World, handler: baseline.Handler, samples: int) -> dict[str, Any]:
    """In-process moto: wall time, split into moto's emulation (per operation) and the rest."""
    with EmulatorMeter().installed() as meter:
        mine, theirs = _interleaved(world, handler, samples, meter)
    client_ours = statistics.median(s.wall - s.emulation for s in mine)
    client_base = statistics.median(s.wall - s.emulation for s in theirs)
    cpu_ours = statistics.median(s.lambda_cpu for s in mine)
    cpu_base = statistics.median(s.lambda_cpu for s in theirs)
    return {
        **_wall(mine, theirs, samples),
        "ours_moto_emulation_median_ms": _ms(statistics.median(s.emulation for s in mine)),
        "baseline_moto_emulation_median_ms": _ms(statistics.median(s.emulation for s in theirs)),
        "moto_emulation_median_ms_by_operation": {
            key: {"calls": len(times), "median_ms": _ms(statistics.median(times))}
            for key, times in sorted(meter.by_operation.items())
        },
        "ours_client_median_ms": _ms(client_ours),
        "baseline_client_median_ms": _ms(client_base),
        "client_ratio_of_medians": round(client_ours / client_base, 4),
        "ours_lambda_cpu_median_ms": _ms(cpu_ours),
        "baseline_lambda_cpu_median_ms": _ms(cpu_base),
        "lambda_cpu_ratio_of_medians": round(cpu_ours / cpu_base, 4),
    }


def send_time_ratio_over_http(world: World, handler: baseline.Handler, samples: int) -> dict[str, Any]:
    """moto's server: the same interleaved sends, each request over a local socket (wall time only)."""
    return _wall(*_interleaved(world, handler, samples, EmulatorMeter()), samples)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
