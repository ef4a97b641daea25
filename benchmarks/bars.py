"""The quality bars: which figure of results.json, compared how, against what.

A bar is met, not met, or skipped (its figure was deliberately not measured). A bar that is not
met is a finding, reported in the table and in results.json; only a measurement that errored
makes `make bench` exit non-zero.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

COMPARE: dict[str, Callable[[Any, Any], bool]] = {"<=": operator.le, "<": operator.lt, ">=": operator.ge}

# (figure path in results.json, comparison, limit)
BARS: list[tuple[str, str, float]] = [
    ("ddb_requests.send", "<=", 2),
    ("ddb_requests.replay", "<=", 1),
    ("ddb_requests.reset", "<=", 2),
    ("ddb_requests.event_new", "<=", 1),
    ("ddb_requests.event_duplicate", "<=", 1),
    ("ddb_capacity.send", "<=", 8),
    ("ddb_capacity.replay", "<=", 2),
    ("ddb_capacity.event_new", "<=", 4),
    ("ddb_capacity.event_new_suppression", "<=", 6),
    ("ddb_capacity.event_duplicate", "<=", 2),
    ("send_cpu_ratio_vs_baseline", "<=", 1),
    ("send_time_ratio_vs_baseline_over_http", "<", 1),
    ("ingest_cpu_ms_per_event", "<=", 1.5),
    ("ingest_drain_speedup", ">=", 4),
    ("cold_start_ratio.api", "<=", 1.5),
    ("cold_start_ratio.poller", "<=", 1.5),
    ("cold_start_ratio.sms_delivery_logs", "<=", 1.5),
    ("local_send_growth", "<=", 1.5),
]


def figure(results: dict[str, Any], path: str) -> Any:
    value: Any = results
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def evaluate(results: dict[str, Any], reasons: dict[str, str]) -> dict[str, Any]:
    """Every bar; `reasons` explains figures that are missing ("skipped: ..." or "error: ...")."""
    bars: dict[str, Any] = {}
    for path, compare, limit in BARS:
        value = figure(results, path)
        bar: dict[str, Any] = {"value": value, "limit": _limit(compare, limit)}
        if value is None:
            reason = reasons.get(path) or reasons.get(path.split(".")[0]) or "error: not measured"
            bar.update(met=None if reason.startswith(("skipped", "not available")) else False, reason=reason)
        else:
            bar["met"] = COMPARE[compare](value, limit)
        bars[path] = bar
    ours_send = figure(results, "ddb_requests.send")
    base_send = figure(results, "baseline_ddb_requests.send")
    below: dict[str, Any] = {"value": ours_send, "limit": f"< {base_send}"}
    if ours_send is None or base_send is None:
        below.update(met=False, reason="error: a send count is missing")
    else:
        below["met"] = ours_send < base_send
    bars["ddb_requests.send_below_baseline"] = below
    return bars


def _limit(compare: str, limit: float) -> Any:
    """A plain number means "at most" (as before); other comparisons are spelled out."""
    return limit if compare == "<=" else f"{'≥' if compare == '>=' else compare} {limit:g}"
