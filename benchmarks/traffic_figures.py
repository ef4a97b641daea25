"""The traffic run's figures: per operation, per send path and per delivery event kind.

A figure is one counted request (or a send's chain of them): its DynamoDB requests, the
capacity billed, the partitions it touched. Percentiles are nearest rank, and every summary
keeps the mean too, since a bill multiplies the mean by the volume.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks import partitions
from benchmarks.counting import RequestLog
from benchmarks.traffic_model import Slice

OPERATIONS = (
    "send",
    "send_repeat_recipient",
    "replay",
    "reset",
    "event_new",
    "event_duplicate",
    "send_label",
    "sms_receipt",
)


@dataclass
class Figure:
    operation: str
    requests: int
    wru: float
    rru: float
    operations: list[str]
    partitions: set[str]
    status: int = 0
    detail: dict[str, Any] | None = None
    log_bytes: int = 0
    channel: str | None = None


def figure_of(operation: str, log: RequestLog, status: int = 0, detail: dict[str, Any] | None = None) -> Figure:
    return Figure(
        operation=operation,
        requests=log.total,
        wru=sum(r.capacity.get("write_request_units", 0.0) for r in log.requests),
        rru=sum(r.capacity.get("read_request_units", 0.0) for r in log.requests),
        operations=log.summary(),
        partitions=partitions.touched(log.requests),
        status=status,
        detail=detail,
    )


def percentiles(values: list[float]) -> dict[str, float | None]:
    """Nearest rank: p95 is the smallest value at least 95% of the sample is at or under; and the
    mean, which is what a bill (a sum over every request) multiplies by the volume."""
    if not values:
        return {"p50": None, "p95": None, "max": None, "mean": None}
    ordered = sorted(values)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    return {"p50": rank(0.50), "p95": rank(0.95), "max": ordered[-1], "mean": round(sum(values) / len(values), 4)}


@dataclass
class CpuSample:
    ours: float  # ms of Lambda CPU
    baseline: float


def cpu_summary(samples: list[CpuSample], timed_every: int) -> dict[str, Any]:
    if not samples:
        return {"reason": "no send was timed"}
    ours = statistics.median(s.ours for s in samples)
    theirs = statistics.median(s.baseline for s in samples)
    return {
        "samples": len(samples),
        "method": (
            f"every {timed_every}th send of the slice, ours and the baseline on the same request, alternating "
            "which goes first; process CPU minus the calling thread's CPU inside moto's stubbed send"
        ),
        "ours_median_ms": round(ours, 3),
        "baseline_median_ms": round(theirs, 3),
        "ours_p95_ms": round(percentiles([s.ours for s in samples])["p95"] or 0.0, 3),
        "baseline_p95_ms": round(percentiles([s.baseline for s in samples])["p95"] or 0.0, 3),
        "ratio_of_medians": round(ours / theirs, 4),
    }


def summarise(played: Slice, figures: list[Figure]) -> dict[str, Any]:
    by_operation: dict[str, list[Figure]] = {name: [] for name in OPERATIONS}
    for figure in figures:
        by_operation[figure.operation].append(figure)
    traffic = {
        name: {
            "count": len(found),
            "requests": percentiles([f.requests for f in found]),
            "wru": percentiles([f.wru for f in found]),
            "rru": percentiles([f.rru for f in found]),
        }
        for name, found in by_operation.items()
    }
    sends = by_operation["send"]
    # The publisher's labels, off the API path: how many a send causes, and what each costs.
    traffic["send_label"]["per_send"] = round(len(by_operation["send_label"]) / max(len(sends), 1), 4)
    sms_sends = sum(1 for f in sends if f.channel == "sms")
    traffic["sms_receipt"]["per_sms_send"] = round(len(by_operation["sms_receipt"]) / max(sms_sends, 1), 4)
    for channel in ("email", "sms"):
        found = [f for f in sends if f.channel == channel]
        traffic[f"send_{channel}"] = {
            "count": len(found),
            "requests": percentiles([f.requests for f in found]),
            "wru": percentiles([f.wru for f in found]),
            "rru": percentiles([f.rru for f in found]),
            "log_bytes": percentiles([f.log_bytes for f in found]),
        }
    return {
        "traffic": traffic,
        "hot_partition": partitions.hottest([f.partitions for f in sends + by_operation["replay"]]),
        "send_paths": _paths(sends),
        "events_by_kind": _events_by_kind(by_operation["event_new"], by_operation["event_duplicate"]),
        "model": played.model.describe(),
        "slice": {
            "start": played.start.isoformat(),
            "seconds": played.model.slice_seconds,
            "requests_played": len(played.requests),
            "requests_counted": len(played.counted),
            "earlier_sends_played": len(played.requests) - len(played.counted),
            "sends_in_stale_window": sum(1 for f in sends if (f.detail or {}).get("in_stale_window")),
        },
    }


def _paths(sends: list[Figure]) -> list[dict[str, Any]]:
    """How many sends took which sequence of requests, and what the model says they were."""
    groups: dict[tuple[str, ...], list[Figure]] = {}
    for figure in sends:
        groups.setdefault(tuple(figure.operations), []).append(figure)
    rows = []
    for operations, found in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        details = [f.detail or {} for f in found]
        rows.append(
            {
                "requests": list(operations),
                "sends": len(found),
                "share": round(len(found) / len(sends), 4),
                "wru": percentiles([f.wru for f in found]),
                "history": dict(Counter(str(d.get("history")) for d in details)),
                "in_stale_window": sum(1 for d in details if d.get("in_stale_window")),
            }
        )
    return rows


def _events_by_kind(new: list[Figure], duplicate: list[Figure]) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    for label, found in (("new", new), ("duplicate", duplicate)):
        for figure in found:
            entry = kinds.setdefault(str((figure.detail or {}).get("event")), {})
            entry.setdefault(label, []).append((figure.requests, figure.wru))
    return {
        kind: {
            label: {"count": len(rows), "requests_max": max(r for r, _ in rows), "wru_max": max(w for _, w in rows)}
            for label, rows in entry.items()
        }
        for kind, entry in sorted(kinds.items())
    }
