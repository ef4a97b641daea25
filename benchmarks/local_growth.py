"""Send latency growth through the local stack: sends 1,001-1,100 vs sends 1-100.

The stack (``local.stack.LocalStack``: moto server, gateway, scheduler, simulator) runs in a
child process, ``python -m benchmarks.local_growth``, because it points every client of its
process at its own moto server; the parent only reads the JSON line the child prints.
Each send is one ``POST /v1/messages`` to the gateway over HTTP, a fresh recipient and
Idempotency-Key each, timed with ``perf_counter`` around the whole HTTP exchange; the
scheduler keeps polling every few seconds, and the child logs as ``make run`` does (its default
text format), so what is timed is what a developer's app waits for.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

SENDS = 1100
FIRST = (0, 100)  # sends 1-100
LATE = (1000, 1100)  # sends 1,001-1,100
TIMEOUT_SECONDS = 600  # about 90 s on a 2-core machine; the bound only stops a run that hangs


def measure(root: Path, sends: int = SENDS) -> dict[str, Any]:
    """Run the child and return its figures (raises if it fails)."""
    started = time.perf_counter()
    child = subprocess.run(
        [sys.executable, "-m", "benchmarks.local_growth", str(sends)],
        check=False,  # the exit code is checked below, with the child's stderr
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        env={**make_run_environment(), "SENDLEDGER_LOCAL_LOG_LEVEL": "WARNING"},
    )
    lines = [line for line in child.stdout.splitlines() if line.startswith("{")]
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"local stack run failed ({child.returncode}): {child.stderr.strip()[-500:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def make_run_environment() -> dict[str, str]:
    """What ``make run`` starts with: this process's environment without the settings the in-process
    benchmarks put into it (their 60 s poll interval, table names, Powertools INFO level, fake AWS
    wiring), so the child runs the local stack's own defaults."""
    from sendledger import names

    settings = {value for key, value in vars(names).items() if key.startswith("ENV_")}
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "POWERTOOLS_", "SENDLEDGER_")) and key not in settings
    }


def _post(url: str, body: dict[str, Any], key: str) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": key},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        return int(response.status)


def _run(sends: int) -> dict[str, Any]:
    from local import logs
    from local.ports import free_ports
    from local.stack import LocalStack

    logs.configure(os.environ)
    port, moto_port = free_ports(2)
    stack = LocalStack(port=port, moto_port=moto_port)
    stack.start()
    try:
        assert stack.gateway is not None
        base = stack.gateway.url
        urllib.request.urlopen(urllib.request.Request(f"{base}/local/poll", method="POST"), timeout=60).read()
        latencies: list[float] = []
        for i in range(sends):
            body = {
                "channel": "email",
                "to": f"growth-{i}@example.com",
                "template": {"id": "alert", "version": "1"},
                "params": {"summary": "disk full on db-1"},
            }
            start = time.perf_counter()
            status = _post(f"{base}/v1/messages", body, f"growth-{i}")
            latencies.append(time.perf_counter() - start)
            if status != 202:
                raise RuntimeError(f"send {i + 1} answered {status}")
            if (i + 1) % 100 == 0:
                print(f"{i + 1} sends, last {latencies[-1] * 1000:.1f} ms", file=sys.stderr, flush=True)
    finally:
        stopping = time.perf_counter()
        stack.stop()
        stop_seconds = time.perf_counter() - stopping
    first = statistics.median(latencies[FIRST[0] : FIRST[1]])
    late = statistics.median(latencies[LATE[0] : LATE[1]]) if sends >= LATE[1] else None
    return {
        "method": "POST /v1/messages through the local gateway (python -m local's stack, in a child process)",
        "sends": sends,
        "first_100_median_ms": round(first * 1000, 3),
        "sends_1001_1100_median_ms": None if late is None else round(late * 1000, 3),
        "ratio": None if late is None else round(late / first, 4),
        "stop_seconds_after_last_send": round(stop_seconds, 2),  # what SIGTERM waits for in make run
    }


if __name__ == "__main__":
    _ROOT = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_ROOT / "functions"), str(_ROOT)]
    sys.stdout = sys.stderr  # the stack's banner and logs; the figures go to the real stdout
    figures = _run(int(sys.argv[1]) if len(sys.argv) > 1 else SENDS)
    print(json.dumps(figures), file=sys.__stdout__, flush=True)
