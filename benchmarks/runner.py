"""Runs every measurement, writes results.json and README.md, prints a summary, sets the exit code."""

from __future__ import annotations

import json
import platform
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from benchmarks import cost, report
from benchmarks.aws import _Discard

TIMED_SAMPLES = 40  # per side (the bar needs N >= 30)
COLD_START_RUNS = 11  # per module (the bar needs >= 7)
THROUGHPUT_EMAILS = 20
THROUGHPUT_SMS = 10

LIMITS = {
    "ddb_requests.send": 2,
    "ddb_requests.replay": 1,
    "ddb_requests.reset": 2,
    "ddb_requests.event_new": 1,
    "ddb_requests.event_duplicate": 1,
    "cold_start_ratio.api": 1.5,
    "cold_start_ratio.poller": 1.5,
    "cold_start_ratio.sms_delivery_logs": 1.5,
}


def run(root: Path) -> int:
    started = time.perf_counter()
    out: TextIO = sys.stdout
    errors: dict[str, str] = {}
    # Powertools loggers bind sys.stdout when created: created from here on, they write to a sink
    # (as in Lambda, the JSON lines are still formatted; only the write is skipped).
    sys.stdout = _Discard()
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    try:
        in_process: dict[str, Any] = _guard("in_process", errors, lambda: _in_process(errors, out)) or {}
        in_process["timing_http"] = _guard("send_time_over_http", errors, lambda: _over_http(out))
    finally:
        sys.stdout = out
    _say(out, "cold start: timing fresh interpreters ...")
    cold = _guard("cold_start", errors, lambda: _cold_start(root))
    _say(out, "asset: bundling into a temporary directory ...")
    asset = _guard("asset_bytes", errors, lambda: _asset(root))
    results = assemble(in_process, cold or {}, asset or {}, errors)
    results["run"] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "errors": errors,
    }
    bench = root / "benchmarks"
    (bench / "results.json").write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    (bench / "README.md").write_text(report.render(results))
    failed = [name for name, bar in results["bars"].items() if bar["met"] is False]
    _say(out, report.summary(results))
    if failed:
        _say(out, f"FAILED bars: {', '.join(failed)}")
    _say(out, f"wrote benchmarks/results.json and benchmarks/README.md in {results['run']['seconds']} s")
    return 1 if failed or errors else 0


def _say(out: TextIO, text: str) -> None:
    print(text, file=out, flush=True)


def _guard(name: str, errors: dict[str, str], call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:
        errors[name] = f"{type(exc).__name__}: {exc}"
        traceback.print_exc(file=sys.stderr)
        return None


def _in_process(errors: dict[str, str], out: TextIO) -> dict[str, Any]:
    from benchmarks import baseline, ingestion, ours, timing
    from benchmarks.aws import moto_world

    found: dict[str, Any] = {}
    with moto_world() as world:
        _say(out, "requests: sendledger through the api handler ...")
        found["ours"] = _guard("ddb_requests", errors, lambda: ours.count_requests(world))
        handler = _guard("baseline", errors, baseline.make_handler)
        if handler is not None:
            _say(out, "requests: Powertools @idempotent baseline ...")
            found["baseline"] = _guard("baseline_ddb_requests", errors, lambda: baseline.count_requests(handler))
            _say(out, f"time: {TIMED_SAMPLES} interleaved sends each ...")
            found["timing"] = _guard(
                "send_time_ratio", errors, lambda: timing.send_time_ratio(world, handler, TIMED_SAMPLES)
            )
        _say(out, "events: new and duplicate, through the ingestion handlers ...")
        found["events"] = _guard("events", errors, lambda: ingestion.measure_events(world))
        _say(out, "events: poll-cycle throughput ...")
        found["throughput"] = _guard(
            "ingest_events_per_second", errors, lambda: ingestion.throughput(world, THROUGHPUT_EMAILS, THROUGHPUT_SMS)
        )
    return found


def _over_http(out: TextIO) -> dict[str, Any]:
    from benchmarks import baseline, timing
    from benchmarks.aws import moto_server_world

    with moto_server_world() as world:
        handler = baseline.make_handler()
        _say(out, f"time: {TIMED_SAMPLES} interleaved sends each, over HTTP to moto's server ...")
        return timing.send_time_ratio_over_http(world, handler, TIMED_SAMPLES)


def _cold_start(root: Path) -> dict[str, Any]:
    from benchmarks import cold_start

    return cold_start.measure(root, COLD_START_RUNS)


def _asset(root: Path) -> dict[str, Any]:
    from benchmarks import asset

    return asset.measure(root)


# --- assembling the figures -------------------------------------------------------------------
def _events(events: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Worst case over every measured event kind and source (the bar holds for each)."""
    figures: dict[str, Any] = {"event_new": None, "event_duplicate": None}
    detail: dict[str, Any] = {}
    if not events:
        return figures, {"reason": "error: see run.errors.events"}
    if events.get("reason"):
        return figures, {"reason": events["reason"]}
    for source in ("ses", "sms"):
        block = events.get(source)
        if not block or block.get("reason"):
            detail[source] = {"reason": (block or {}).get("reason", "not measured")}
            continue
        detail[source] = {
            "method": block["method"],
            "new": {f["event"]: f["requests"] for f in block["new"]},
            "duplicate": {f["event"]: f["requests"] for f in block["duplicate"]},
            "new_operations": {f["event"]: f["operations"] for f in block["new"]},
        }
        for kind in ("new", "duplicate"):
            worst = max(f["requests"] for f in block[kind])
            key = f"event_{kind}"
            figures[key] = worst if figures[key] is None else max(figures[key], worst)
            figures[f"{key}_{source}"] = worst
    return figures, detail


def assemble(
    found: dict[str, Any], cold: dict[str, Any], asset: dict[str, Any], errors: dict[str, str]
) -> dict[str, Any]:
    ours_counts = found.get("ours") or {}
    base_counts = found.get("baseline") or {}
    timing_result = found.get("timing") or {}
    throughput = found.get("throughput") or {}
    event_figures, event_detail = _events(found.get("events"))

    ddb = {name: (ours_counts.get(name) or {}).get("requests") for name in ("send", "replay", "reset", "reset_mail")}
    ddb.update(event_figures)
    ddb["sms_send"] = (ours_counts.get("sms_send") or {}).get("requests")
    baseline_ddb = {name: (base_counts.get(name) or {}).get("requests") for name in ("send", "replay")}

    cold_ratio = dict(cold.get("ratio") or {})
    for name in ("api", "poller", "sms_delivery_logs"):
        cold_ratio.setdefault(name, None)

    costs: dict[str, Any] = {}
    cpu_ms = float(timing_result.get("ours_client_median_ms") or 0.0)
    if ours_counts.get("send"):
        costs["email_send"] = cost.send_cost(ours_counts["send"], "email", cpu_ms)
    if ours_counts.get("sms_send"):
        costs["sms_send"] = cost.send_cost(ours_counts["sms_send"], "sms", cpu_ms)
    events = found.get("events") or {}
    per_event_cpu = float(throughput.get("client_ms_per_event") or 0.0)
    by_kind: dict[str, Any] = {}
    for source, price in (("ses", cost.ses_event_cost), ("sms", cost.sms_event_cost)):
        block = events.get(source) or {}
        for figure in block.get("new") or []:
            by_kind[figure["event"]] = price(figure, per_event_cpu)
    if by_kind:
        # Headline: the commonest event, an SES Delivery; every kind is itemised beside it.
        typical = next((kind for kind in by_kind if kind == "ses:Delivery"), None)
        headline = typical or max(by_kind, key=lambda kind: by_kind[kind]["usd"])
        costs["event"] = {"event": headline, **by_kind[headline]}
        costs["event_by_kind"] = by_kind

    cost_per_million = {key: (costs.get(key) or {}).get("usd") for key in ("email_send", "sms_send", "event")}

    results: dict[str, Any] = {
        "ddb_requests": ddb,
        "baseline_ddb_requests": baseline_ddb,
        "send_time_ratio_vs_baseline": timing_result.get("ratio_of_medians"),
        "send_time_ratio_vs_baseline_over_http": (found.get("timing_http") or {}).get("ratio_of_medians"),
        "cold_start_ratio": {k: cold_ratio[k] for k in ("api", "poller", "sms_delivery_logs")},
        "ingest_events_per_second": throughput.get("events_per_second"),
        "asset_bytes": asset.get("bytes"),
        "cost_per_million": cost_per_million,
        "prices": cost.PRICES,
        "bars": {},
        "detail": {
            "ddb_requests": {
                "ours": ours_counts,
                "baseline": base_counts,
                "events": event_detail,
                "counting": (
                    "botocore before-call.dynamodb hook on every DynamoDB client of the process "
                    "(the ledger's own clients plus any client created later), moto in-process"
                ),
            },
            "send_time": timing_result,
            "send_time_over_http": found.get("timing_http") or {},
            "cold_start": cold,
            "ingest_throughput": throughput,
            "asset": asset,
            "cost": {**costs, "assumed_latency_ms": cost.ASSUMED_LATENCY_MS, "memory_gb": cost.MEMORY_GB},
        },
    }
    results["bars"] = _bars(results, found, cold, errors)
    return results


def _bars(
    results: dict[str, Any], found: dict[str, Any], cold: dict[str, Any], errors: dict[str, str]
) -> dict[str, Any]:
    bars: dict[str, Any] = {}
    for path, limit in LIMITS.items():
        group, name = path.split(".")
        value = results[group].get(name)
        bar: dict[str, Any] = {"value": value, "limit": limit, "met": None if value is None else value <= limit}
        if value is None:
            reason = _missing_reason(group, name, found, cold, errors)
            bar["reason"] = reason
            bar["met"] = None if reason.startswith("not available") else False
        bars[path] = bar
    ours_send = results["ddb_requests"].get("send")
    base_send = results["baseline_ddb_requests"].get("send")
    bars["ddb_requests.send_below_baseline"] = {
        "value": ours_send,
        "limit": f"< {base_send}",
        "met": None if ours_send is None or base_send is None else ours_send < base_send,
    }
    if bars["ddb_requests.send_below_baseline"]["met"] is None:
        bars["ddb_requests.send_below_baseline"].update(met=False, reason="error: a send count is missing")
    ratio = results["send_time_ratio_vs_baseline"]
    bars["send_time_ratio_vs_baseline"] = {
        "value": ratio,
        "limit": "< 1",
        "met": False if ratio is None else ratio < 1,
    }
    return bars


def _missing_reason(group: str, name: str, found: dict[str, Any], cold: dict[str, Any], errors: dict[str, str]) -> str:
    if group == "cold_start_ratio":
        module = (cold.get("modules") or {}).get(name) or {}
        return str(module.get("reason") or f"error: {errors.get('cold_start', 'not measured')}")
    if name.startswith("event_"):
        events = found.get("events")
        if events and events.get("reason"):
            return str(events["reason"])
        if events:
            reasons = [str((events.get(source) or {}).get("reason", "")) for source in ("ses", "sms")]
            return "; ".join(reason for reason in reasons if reason) or "error: no event measured"
        return f"error: {errors.get('events', 'not measured')}"
    return f"error: {errors.get('ddb_requests', 'not measured')}"
