"""The quality bars: which figure of results.json, compared how, against what.

A bar is met, not met, or skipped (its figure was deliberately not measured). `make bench`
exits non-zero when a bar is not met or a measurement failed: the committed table is one where
every bar holds, or says which does not.

v3 (SPEC section 14) measures the traffic mix at p95 and replaces v2's single-path bars
where they cover the same thing: `ddb_capacity.replay` and `ddb_capacity.event_duplicate` by the
traffic's replay and duplicate bars, the import-only `cold_start_ratio.*` by the first
invocation's, `ingest_cpu_ms_per_event` (an absolute time) by a ratio to a baseline consumer,
the derived `ingest_drain_speedup` by the measured one. The v2 figures stay in results.json.

v4 (issue 36) compares each cold start with a hand-written Lambda making the same AWS calls
(`cold_start_ratio_vs_same_calls`; the one-client ratio stays in results.json as information),
holds the ingestion CPU ratio's median over runs (`ingest_cpu_ratio_runs`; one run's ratio
stays as information) and the email overhead at $12.50 per million, status events on EventBridge.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

COMPARE: dict[str, Callable[[Any, Any], bool]] = {"<=": operator.le, "<": operator.lt, ">=": operator.ge}

# (figure path in results.json, comparison, limit)
BARS: list[tuple[str, str, float]] = [
    # v3/v4: the traffic mix, at p95 (benchmarks/traffic.py); v4 holds email and SMS to one budget
    ("traffic.send.requests.p95", "<=", 2),
    ("traffic.send.wru.p95", "<=", 8),
    ("traffic.send_email.requests.p95", "<=", 2),
    ("traffic.send_email.wru.p95", "<=", 8),
    ("traffic.send_sms.requests.p95", "<=", 2),
    ("traffic.send_sms.wru.p95", "<=", 8),
    # v4: template reads per send over the mix (usecases/template_catalog.py)
    ("traffic.send.template_reads_per_send", "<=", 0.02),
    ("traffic.send_repeat_recipient.requests.p95", "<=", 2),
    ("traffic.send_repeat_recipient.wru.p95", "<=", 8),
    ("traffic.replay.requests.p95", "<=", 1),
    # v4: billed as attempted (no AWS text bills a cancelled transaction for its prepare phase
    # only): a two-item intent's replay cannot cost less than 2 items x 2 units.
    ("traffic.replay.wru.p95", "<=", 4),
    ("traffic.event_new.requests.p95", "<=", 1),
    ("traffic.event_new.wru.p95", "<=", 2),
    ("traffic.event_duplicate.requests.p95", "<=", 1),
    ("hot_partition_share", "<=", 0.125),
    # v4 (issue 36): against a hand-written Lambda making the same AWS calls, first invocation included
    ("cold_start_ratio_vs_same_calls.api", "<=", 1.5),
    ("cold_start_ratio_vs_same_calls.poller", "<=", 1.5),
    ("cold_start_ratio_vs_same_calls.sms_delivery_logs", "<=", 1.5),
    ("cold_start_ratio_vs_same_calls.publisher", "<=", 1.5),
    ("send_cpu_ratio_vs_baseline", "<=", 1),
    # v4: the median of at least five runs' ratios (the spread is beside it in results.json)
    ("ingest_cpu_ratio_runs.median", "<=", 1.3),
    ("drain_speedup_measured", ">=", 4),
    ("cost_per_million.email.overhead", "<=", 12.5),
    # v2, single path, still barred
    ("ddb_requests.send", "<=", 2),
    ("ddb_requests.replay", "<=", 1),
    ("ddb_requests.reset", "<=", 2),
    ("ddb_requests.event_new", "<=", 1),
    ("ddb_requests.event_duplicate", "<=", 1),
    ("ddb_capacity.send", "<=", 8),
    ("ddb_capacity.event_new", "<=", 4),
    ("ddb_capacity.event_new_suppression", "<=", 6),
    ("send_time_ratio_vs_baseline_over_http", "<", 1),
    ("local_send_growth", "<=", 1.5),
]


def figure(results: dict[str, Any], path: str) -> Any:
    value: Any = results
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def evaluate(results: dict[str, Any], reasons: dict[str, str]) -> dict[str, Any]:
    """Every bar; `reasons` explains figures that are missing ("skipped: ..." or "error: ...")."""
    found: dict[str, Any] = {}
    for path, compare, limit in BARS:
        value = figure(results, path)
        bar: dict[str, Any] = {"value": value, "limit": _limit(compare, limit)}
        if value is None:
            reason = reasons.get(path) or reasons.get(path.split(".")[0]) or "error: not measured"
            bar.update(met=None if reason.startswith(("skipped", "not available")) else False, reason=reason)
        else:
            bar["met"] = COMPARE[compare](value, limit)
        found[path] = bar
    ours_send = figure(results, "ddb_requests.send")
    base_send = figure(results, "baseline_ddb_requests.send")
    below: dict[str, Any] = {"value": ours_send, "limit": f"< {base_send}"}
    if ours_send is None or base_send is None:
        below.update(met=False, reason="error: a send count is missing")
    else:
        below["met"] = ours_send < base_send
    found["ddb_requests.send_below_baseline"] = below
    return found


def not_met(bars: dict[str, Any]) -> list[str]:
    return [name for name, bar in bars.items() if bar["met"] is False]


def _limit(compare: str, limit: float) -> Any:
    """A plain number means "at most" (as before); other comparisons are spelled out."""
    return limit if compare == "<=" else f"{'≥' if compare == '>=' else compare} {limit:g}"


def add_sms_cap(results: dict[str, Any], found: dict[str, Any] | None, error: str | None) -> None:
    """The SMS cap's figures (benchmarks/sms_cap.py) and their bar, whose limit is the run's own:
    max(2 % of the cap, the segments of 5 s of the caller's traffic)."""
    found = found or {}
    overshoot, limit = found.get("overshoot_segments"), found.get("bar_segments")
    results["sms_cap"] = found
    results["sms_cap_overshoot_segments"] = overshoot
    results["sms_cap_overshoot_bar_segments"] = limit
    bar: dict[str, Any] = {"value": overshoot, "limit": f"<= {limit}"}
    if overshoot is None or limit is None:
        bar.update(met=False, reason=f"error: {error or 'not measured'}")
    else:
        bar["met"] = overshoot <= limit
    results["bars"]["sms_cap_overshoot_segments"] = bar
