"""Cold start: import time of each handler module in fresh interpreters vs `import boto3`.

Each sample is a new ``python -I -c`` process (same interpreter as the benchmark) with a
deployed Lambda's environment (benchmarks.environment.lambda_environment: runtime variables,
POWERTOOLS_*, table and queue names; tracing enabled as in the stack) that times the import
with ``time.perf_counter`` around it (the bar), plus ``time.process_time`` (a cross-check less
sensitive to other load). Modules are sampled round-robin so machine noise hits all of them
alike; one unmeasured warm-up run per module writes the bytecode caches first.

The same child then builds the handler's composition root (``bootstrap.runtime()``, and its
``pipeline`` for the ingestion handlers; no AWS call is made) and reports that
too: the init work a cold start pays before its first request, whichever of import or first
use it happens in. It is informational (no bar), and keeps deferring imports honest.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.environment import lambda_environment

BASELINE_MODULE = "boto3"
HANDLERS = {
    "api": "sendledger.handlers.api",
    "poller": "sendledger.handlers.poller",
    "sms_delivery_logs": "sendledger.handlers.sms_delivery_logs",
}
COMPOSITION = {  # what each handler's first invocation builds
    "api": "services",
    "poller": "pipeline",
    "sms_delivery_logs": "pipeline",
}
MEMORY_MB = {"api": 512, "poller": 512, "sms_delivery_logs": 256}

_CHILD = """
import importlib, sys, time
sys.path.insert(0, {functions!r})
cpu, start = time.process_time(), time.perf_counter()
import {module}
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
print("IMPORT_SECONDS", repr(elapsed), repr(cpu), flush=True)
if {composition!r}:
    start = time.perf_counter()
    getattr(importlib.import_module("sendledger.bootstrap").runtime(), {composition!r})
    print("COMPOSITION_SECONDS", repr(time.perf_counter() - start))
"""


class Sample:
    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.composition: list[float] = []
        self.composition_error = ""


def _run(module: str, composition: str | None, functions: Path, env: dict[str, str], into: Sample) -> str:
    code = _CHILD.format(functions=str(functions), module=module, composition=composition)
    completed = subprocess.run(
        [sys.executable, "-I", "-c", code],
        cwd=str(functions),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    imported = False
    for line in completed.stdout.splitlines():
        if line.startswith("IMPORT_SECONDS "):
            _, wall, cpu = line.split()
            into.wall.append(float(wall))
            into.cpu.append(float(cpu))
            imported = True
        elif line.startswith("COMPOSITION_SECONDS "):
            into.composition.append(float(line.split()[1]))
    tail = ((completed.stderr or completed.stdout).strip().splitlines() or ["no output"])[-1]
    if not imported:
        return tail
    if composition and completed.returncode != 0:
        into.composition_error = tail
    return ""


def _env(function: str) -> dict[str, str]:
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
    return {**base, **lambda_environment(f"sendledger-{function}", MEMORY_MB.get(function, 512))}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def measure(root: Path, runs: int) -> dict[str, Any]:
    functions = root / "functions"
    targets: dict[str, str] = {BASELINE_MODULE: BASELINE_MODULE}
    unavailable: dict[str, str] = {}
    for name, module in HANDLERS.items():
        path = functions / Path(*module.split(".")).with_suffix(".py")
        if path.exists():
            targets[name] = module
        else:
            unavailable[name] = f"not available: {module} is missing ({path.relative_to(root)})"
    envs = {name: _env("api" if name == BASELINE_MODULE else name) for name in targets}
    samples = {name: Sample() for name in targets}
    errors: dict[str, str] = {}
    for name, module in targets.items():  # warm-up: bytecode caches written, not measured
        error = _run(module, COMPOSITION.get(name), functions, envs[name], Sample())
        if error:
            errors[name] = error
    for _ in range(runs):
        for name, module in targets.items():
            if name not in errors:
                error = _run(module, COMPOSITION.get(name), functions, envs[name], samples[name])
                if error:
                    errors[name] = error
    boto3 = samples[BASELINE_MODULE]
    if BASELINE_MODULE in errors or not boto3.wall:
        raise RuntimeError(f"cannot time `import boto3`: {errors.get(BASELINE_MODULE)}")
    boto3_wall, boto3_cpu = statistics.median(boto3.wall), statistics.median(boto3.cpu)
    result: dict[str, Any] = {
        "runs_per_module": runs,
        "method": "median of fresh `python -I -c` imports timed with perf_counter, Lambda environment",
        "boto3_median_ms": _ms(boto3_wall),
        "boto3_cpu_median_ms": _ms(boto3_cpu),
        "modules": {},
        "ratio": {},
        "cpu_time_ratio": {},
        "import_plus_composition_ratio": {},
    }
    for name in HANDLERS:
        if name in unavailable or name in errors:
            reason = unavailable.get(name) or f"error: import failed ({errors[name]})"
            result["modules"][name] = {"reason": reason}
            for key in ("ratio", "cpu_time_ratio", "import_plus_composition_ratio"):
                result[key][name] = None
            continue
        sample = samples[name]
        wall = statistics.median(sample.wall)
        module_result: dict[str, Any] = {
            "module": targets[name],
            "median_ms": _ms(wall),
            "min_ms": _ms(min(sample.wall)),
            "max_ms": _ms(max(sample.wall)),
            "composition": f"bootstrap.runtime().{COMPOSITION[name]}",
        }
        result["ratio"][name] = round(wall / boto3_wall, 3)
        result["cpu_time_ratio"][name] = round(statistics.median(sample.cpu) / boto3_cpu, 3)
        if sample.composition and not sample.composition_error:
            composition = statistics.median(sample.composition)
            module_result["composition_median_ms"] = _ms(composition)
            total = statistics.median(w + c for w, c in zip(sample.wall, sample.composition, strict=False))
            result["import_plus_composition_ratio"][name] = round(total / boto3_wall, 3)
        else:
            module_result["composition_reason"] = f"not available: {sample.composition_error or 'not run'}"
            result["import_plus_composition_ratio"][name] = None
        result["modules"][name] = module_result
    return result
