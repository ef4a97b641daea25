"""Runs every measurement, writes results.json and README.md, prints a summary, sets the exit code."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from benchmarks import bars, docs_figures, report
from benchmarks.aws import _Discard
from benchmarks.figures import assemble

TIMED_SAMPLES = 40  # per side (the bar needs N >= 30)
COLD_START_RUNS = 11  # per target (the bar needs >= 7)
THROUGHPUT_EMAILS = 20
THROUGHPUT_SMS = 10
THROUGHPUT_ROUNDS = 3  # informational now

LOCAL_GROWTH_FLAG = "SENDLEDGER_BENCH_LOCAL_GROWTH"  # "0": skip the 1,100 sends through the local stack


def run(root: Path) -> int:
    started = time.perf_counter()
    out: TextIO = sys.stdout
    errors: dict[str, str] = {}
    # Powertools loggers bind sys.stdout when created: created from here on, they write to a sink
    # (as in Lambda, the JSON lines are still formatted; the sink counts their bytes).
    sys.stdout = _Discard()
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    try:
        in_process: dict[str, Any] = _guard("in_process", errors, lambda: _in_process(errors, out)) or {}
        in_process["timing_http"] = _guard("send_time_over_http", errors, lambda: _over_http(out))
    finally:
        sys.stdout = out
    sections: dict[str, Any] = {}
    for name, label, measure in (
        ("batching", "events: what batching them into transactions would trade", _batching),
        ("cold_start", "cold start: import, composition and first invocation in fresh processes", _cold_start),
        ("drain", "drain: one event at a time against concurrently, 10 ms round trips", _drain),
        ("ingest_cpu", "ingestion CPU: the poller's drain against a plain boto3 consumer", _ingest_cpu),
        ("asset", "asset: bundling into a temporary directory", _asset),
        ("pynamodb", "PynamoDB: its import and an item through a model against the low-level path", _pynamodb),
        ("sms_cap", "SMS cap: a caller capped at 1,000 segments sending at its full rate", _sms_cap),
    ):
        _say(out, f"{label} ...")
        sections[name] = _guard(name, errors, lambda measure=measure: measure(root))
    in_process["local_growth"] = _local_growth(root, errors, out)
    results = assemble(in_process, sections, errors)
    results["pynamodb"] = sections.get("pynamodb")
    bars.add_sms_cap(results, sections.get("sms_cap"), errors.get("sms_cap"))
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
    docs_figures.update(root, results)
    failing = bars.not_met(results["bars"])
    _say(out, report.summary(results))
    if failing:
        _say(out, f"bars not met: {', '.join(failing)}")
    _say(
        out,
        f"wrote benchmarks/results.json, benchmarks/README.md and docs/benchmarks.md in {results['run']['seconds']} s",
    )
    if errors:
        _say(out, f"measurement errors: {', '.join(errors)}")
    return 1 if errors or failing else 0


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
    from benchmarks import baseline, ours, timing
    from benchmarks.aws import moto_world

    found: dict[str, Any] = {}
    with moto_world() as world:
        _say(out, "requests: sendledger through the api handler (single path) ...")
        found["ours"] = _guard("ddb_requests", errors, lambda: ours.count_requests(world))
        handler = _guard("baseline", errors, baseline.make_handler)
        if handler is not None:
            _say(out, "requests: Powertools @idempotent baseline ...")
            found["baseline"] = _guard("baseline_ddb_requests", errors, lambda: baseline.count_requests(handler))
            _say(out, f"time: {TIMED_SAMPLES} interleaved happy-path sends each ...")
            found["timing"] = _guard(
                "send_time_ratio", errors, lambda: timing.send_time_ratio(world, handler, TIMED_SAMPLES)
            )
        _say(out, "events: new and duplicate, through the ingestion handlers ...")
        found["events"] = _guarded_events(world, errors)
        _say(out, "traffic: the model's slice of the busy hour through the handlers ...")
        found["traffic"] = _guard("traffic", errors, lambda: _traffic(world))
        _say(out, "events: poll-cycle throughput ...")
        found["throughput"] = _guard("ingest_events_per_second", errors, lambda: _throughput(world))
    return found


def _throughput(world: Any) -> dict[str, Any]:
    from benchmarks import throughput

    return throughput.measure(world, THROUGHPUT_EMAILS, THROUGHPUT_SMS, THROUGHPUT_ROUNDS)


def _traffic(world: Any) -> dict[str, Any]:
    from benchmarks import traffic

    with traffic.fresh(world):
        return traffic.measure(world)


def _events(world: Any) -> dict[str, Any]:
    from benchmarks import ingestion

    return ingestion.measure_events(world)


def _guarded_events(world: Any, errors: dict[str, str]) -> dict[str, Any] | None:
    """The events section; a source that failed alone (its figures say why) is a run error too."""
    found: dict[str, Any] | None = _guard("events", errors, lambda: _events(world))
    for source, figures in (found or {}).items():
        reason = str(figures.get("reason", "")) if isinstance(figures, dict) else ""
        if reason.startswith("error:"):
            errors[f"events.{source}"] = reason.removeprefix("error: ")
    return found


SECTIONS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "events": _events,
    "throughput": _throughput,
    "traffic": _traffic,
}
CHILD_SECTIONS: dict[str, Callable[[Path], dict[str, Any]]] = {}  # filled below: sections run in child processes


def run_section(name: str, root: Path) -> int:
    """One section (in a fresh moto world when it needs one): its figures on stdout, no file written."""
    from benchmarks.aws import moto_world

    out: TextIO = sys.stdout
    sys.stdout = _Discard()
    try:
        if name in CHILD_SECTIONS:
            figures = CHILD_SECTIONS[name](root)
        else:
            with moto_world() as world:
                figures = SECTIONS[name](world)
    finally:
        sys.stdout = out
    _say(out, json.dumps(figures, indent=2, default=str))
    return 0


def smoke(root: Path) -> int:
    """Every section once, as small as it runs (the test suite's check that the bench still runs
    against the product as it is): figures assembled and rendered, nothing written, bars ignored."""
    from benchmarks import baseline, cold_start, drain, ingest_cpu, ours, traffic
    from benchmarks.aws import moto_world
    from benchmarks.traffic_model import TrafficModel

    out: TextIO = sys.stdout
    errors: dict[str, str] = {}
    sys.stdout = _Discard()
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    found: dict[str, Any] = {}
    try:
        with moto_world() as world:
            found["ours"] = _guard("ddb_requests", errors, lambda: ours.count_requests(world))
            handler = baseline.make_handler()
            found["baseline"] = _guard("baseline_ddb_requests", errors, lambda: baseline.count_requests(handler))
            # Every provider's event path as the product parses it today (a renamed evidence key broke it once).
            found["events"] = _guarded_events(world, errors)
            tiny = TrafficModel(slice_seconds=0.6, events_sampled=6)
            with traffic.fresh(world):
                found["traffic"] = _guard("traffic", errors, lambda: traffic.measure(world, tiny))
    finally:
        sys.stdout = out
    sections = {
        "cold_start": _guard("cold_start", errors, lambda: cold_start.measure(root, 1, ("api",), warm=False)),
        "drain": _guard("drain", errors, lambda: drain.measure(root, events=6, rounds=1)),
        "ingest_cpu": _guard("ingest_cpu", errors, lambda: ingest_cpu.measure(root, events=6, rounds=1, runs=1)),
        "sms_cap": _guard("sms_cap", errors, lambda: _sms_cap(root, cap=5)),
    }
    results = assemble(found, sections, errors)
    bars.add_sms_cap(results, sections["sms_cap"], errors.get("sms_cap"))
    results["run"] = {"generated_at": "smoke", "seconds": 0, "python": "", "machine": "", "errors": errors}
    report.render(results)
    docs_figures.render((root / "docs" / "benchmarks.md").read_text(), results)
    _say(out, json.dumps({"errors": errors, "traffic": results["traffic"].get("send")}, default=str))
    return 1 if errors else 0


def _over_http(out: TextIO) -> dict[str, Any]:
    from benchmarks import baseline, timing
    from benchmarks.aws import moto_server_world

    with moto_server_world() as world:
        handler = baseline.make_handler()
        _say(out, f"time: {TIMED_SAMPLES} interleaved sends each, over HTTP to moto's server ...")
        return timing.send_time_ratio_over_http(world, handler, TIMED_SAMPLES)


def _batching(root: Path) -> dict[str, Any]:
    from benchmarks import batching

    return batching.measure()


def _cold_start(root: Path) -> dict[str, Any]:
    from benchmarks import cold_start

    return cold_start.measure(root, COLD_START_RUNS)


def _pynamodb(root: Path) -> dict[str, Any]:
    from benchmarks import pynamodb_cost

    return pynamodb_cost.measure(root)


def _sms_cap(root: Path, cap: int | None = None) -> dict[str, Any]:
    from benchmarks import sms_cap

    return sms_cap.measure(root, cap or sms_cap.CAP)


def _asset(root: Path) -> dict[str, Any]:
    from benchmarks import asset

    return asset.measure(root)


def _drain(root: Path) -> dict[str, Any]:
    from benchmarks import drain

    return drain.measure(root)


def _ingest_cpu(root: Path) -> dict[str, Any]:
    from benchmarks import ingest_cpu

    return ingest_cpu.measure(root)


CHILD_SECTIONS.update(cold_start=_cold_start, drain=_drain, ingest_cpu=_ingest_cpu, batching=_batching)
CHILD_SECTIONS.update(sms_cap=_sms_cap)


def _local_growth(root: Path, errors: dict[str, str], out: TextIO) -> dict[str, Any]:
    if os.environ.get(LOCAL_GROWTH_FLAG) == "0":
        return {"reason": f"skipped: {LOCAL_GROWTH_FLAG}=0"}
    from benchmarks import local_growth

    _say(out, f"local stack: {local_growth.SENDS} sends through the gateway ...")
    return _guard("local_send_growth", errors, lambda: local_growth.measure(root)) or {}
