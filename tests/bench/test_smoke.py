"""`make bench` still runs against the product as it is: every section once, tiny, in a child process.

The bench reaches into the product through its public seams (handlers with `runtime=`,
`bootstrap.build_runtime`, `usecases.poll.drain_ses_queue`, the ledger's stores); a refactor that
moves one fails here, not in the lead's next `make bench`.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_bench_section_runs_and_its_figures_render():
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["errors"] == {}
    assert summary["traffic"]["requests"]["p50"] >= 1
