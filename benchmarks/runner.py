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

from benchmarks import report
from benchmarks.aws import _Discard
from benchmarks.figures import assemble

TIMED_SAMPLES = 40  # per side (the bar needs N >= 30)
COLD_START_RUNS = 11  # per module (the bar needs >= 7)
THROUGHPUT_EMAILS = 20
THROUGHPUT_SMS = 10
THROUGHPUT_ROUNDS = 9

DRAIN_EVENTS = 30
DRAIN_ROUNDS = 3  # per side
LOCAL_GROWTH_FLAG = "SENDLEDGER_BENCH_LOCAL_GROWTH"  # "0": skip the 1,100 sends through the local stack


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
    _say(out, "events: what batching them into transactions would trade ...")
    in_process["batching"] = _guard("batching", errors, _batching)
    _say(out, "cold start: timing fresh interpreters ...")
    cold = _guard("cold_start", errors, lambda: _cold_start(root))
    _say(out, "asset: bundling into a temporary directory ...")
    asset = _guard("asset_bytes", errors, lambda: _asset(root))
    in_process["local_growth"] = _local_growth(root, errors, out)
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
    not_met = [name for name, bar in results["bars"].items() if bar["met"] is False]
    _say(out, report.summary(results))
    if not_met:
        _say(out, f"bars not met: {', '.join(not_met)}")
    _say(out, f"wrote benchmarks/results.json and benchmarks/README.md in {results['run']['seconds']} s")
    if errors:
        _say(out, f"measurement errors: {', '.join(errors)}")
    # A bar not met is a finding (reported above); only a measurement that errored fails the run.
    return 1 if errors else 0


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
        found["throughput"] = _guard("ingest_events_per_second", errors, lambda: _throughput(world))
        _say(out, f"events: drain speedup, {DRAIN_EVENTS} events, {DRAIN_ROUNDS} rounds per side ...")
        found["drain"] = _guard("ingest_drain_speedup", errors, lambda: _drain(world))
    return found


def _drain(world: Any) -> dict[str, Any]:
    from benchmarks import drain

    result: dict[str, Any] = drain.measure(world, DRAIN_EVENTS, DRAIN_ROUNDS)
    return result


def _throughput(world: Any) -> dict[str, Any]:
    from benchmarks import throughput

    return throughput.measure(world, THROUGHPUT_EMAILS, THROUGHPUT_SMS, THROUGHPUT_ROUNDS)


SECTIONS: dict[str, Callable[[Any], dict[str, Any]]] = {"drain": _drain, "throughput": _throughput}


def run_section(name: str) -> int:
    """One in-process section in a fresh moto world: its figures on stdout, no file written."""
    from benchmarks.aws import moto_world

    out: TextIO = sys.stdout
    sys.stdout = _Discard()
    try:
        with moto_world() as world:
            figures = SECTIONS[name](world)
    finally:
        sys.stdout = out
    _say(out, json.dumps(figures, indent=2))
    return 0


def _over_http(out: TextIO) -> dict[str, Any]:
    from benchmarks import baseline, timing
    from benchmarks.aws import moto_server_world

    with moto_server_world() as world:
        handler = baseline.make_handler()
        _say(out, f"time: {TIMED_SAMPLES} interleaved sends each, over HTTP to moto's server ...")
        return timing.send_time_ratio_over_http(world, handler, TIMED_SAMPLES)


def _batching() -> dict[str, Any]:
    from benchmarks import batching

    return batching.measure()


def _cold_start(root: Path) -> dict[str, Any]:
    from benchmarks import cold_start

    return cold_start.measure(root, COLD_START_RUNS)


def _asset(root: Path) -> dict[str, Any]:
    from benchmarks import asset

    return asset.measure(root)


def _local_growth(root: Path, errors: dict[str, str], out: TextIO) -> dict[str, Any]:
    if os.environ.get(LOCAL_GROWTH_FLAG) == "0":
        return {"reason": f"skipped: {LOCAL_GROWTH_FLAG}=0"}
    from benchmarks import local_growth

    _say(out, f"local stack: {local_growth.SENDS} sends through the gateway ...")
    return _guard("local_send_growth", errors, lambda: local_growth.measure(root)) or {}
