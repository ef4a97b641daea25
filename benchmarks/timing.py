"""Send wall time, ours vs the baseline: same process, same moto, interleaved, medians.

Besides the wall time (the bar), each sample is split into the time spent inside moto's
request emulation (``BotocoreStubber.process_request``: what AWS would do server-side) and the
rest (the Lambda's own CPU: handler, validation, SDK serialisation). moto's emulation is not
DynamoDB's latency: its TransactWriteItems deep-copies every involved table once per
transaction item for rollback, so transactions are far dearer in moto than in DynamoDB, where
a transaction costs about two plain writes of latency.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks import baseline, ours
from benchmarks.aws import World

WARMUP = 5


class EmulatorMeter:
    """Accumulates the wall time spent inside moto's in-process request handling."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextlib.contextmanager
    def installed(self) -> Iterator[EmulatorMeter]:
        from moto.core.botocore_stubber import BotocoreStubber

        original = BotocoreStubber.process_request
        meter = self

        def process_request(stubber: Any, request: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(stubber, request)
            finally:
                meter.seconds += time.perf_counter() - start

        BotocoreStubber.process_request = process_request  # type: ignore[method-assign,assignment]
        try:
            yield self
        finally:
            BotocoreStubber.process_request = original  # type: ignore[method-assign]


def _timed(call: Callable[[], tuple[int, dict[str, Any]]], meter: EmulatorMeter) -> tuple[float, float]:
    before = meter.seconds
    start = time.perf_counter()
    status, body = call()
    elapsed = time.perf_counter() - start
    if status != 202 or body.get("state") != "accepted":
        raise RuntimeError(f"timed send failed: {status} {body}")
    return elapsed, meter.seconds - before


def send_time_ratio(world: World, handler: baseline.Handler, samples: int) -> dict[str, Any]:
    """Alternate which side goes first on every round: drift and cache effects hit both."""
    for i in range(WARMUP):
        world.empty_tables()
        world.refresh_watermarks()
        ours.send_email(i, "warmup")
        baseline.send_email(handler, i, "warmup")
    mine: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    with EmulatorMeter().installed() as meter:
        for i in range(samples):
            # Outside the timed window: moto copies whole tables per transaction item, so keep
            # every table (ours and the baseline's) at its minimal state; fresh watermarks keep
            # the optimistic eligibility path (the 2-request send).
            world.empty_tables()
            world.refresh_watermarks()
            gc.collect()
            run_ours = lambda i=i: ours.send_email(i, "timed")  # noqa: E731
            run_base = lambda i=i: baseline.send_email(handler, i, "timed")  # noqa: E731
            if i % 2 == 0:
                mine.append(_timed(run_ours, meter))
                theirs.append(_timed(run_base, meter))
            else:
                theirs.append(_timed(run_base, meter))
                mine.append(_timed(run_ours, meter))
    wall_ours = statistics.median(w for w, _ in mine)
    wall_base = statistics.median(w for w, _ in theirs)
    client_ours = statistics.median(w - e for w, e in mine)
    client_base = statistics.median(w - e for w, e in theirs)
    return {
        "samples_each": samples,
        "order": "interleaved, alternating which side runs first",
        "ours_median_ms": _ms(wall_ours),
        "baseline_median_ms": _ms(wall_base),
        "ours_p90_ms": _ms(_quantile([w for w, _ in mine], 0.9)),
        "baseline_p90_ms": _ms(_quantile([w for w, _ in theirs], 0.9)),
        "ratio_of_medians": round(wall_ours / wall_base, 4),
        "median_of_paired_ratios": round(statistics.median(a[0] / b[0] for a, b in zip(mine, theirs, strict=True)), 4),
        "ours_moto_emulation_median_ms": _ms(statistics.median(e for _, e in mine)),
        "baseline_moto_emulation_median_ms": _ms(statistics.median(e for _, e in theirs)),
        "ours_client_median_ms": _ms(client_ours),
        "baseline_client_median_ms": _ms(client_base),
        "client_ratio_of_medians": round(client_ours / client_base, 4),
    }


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
