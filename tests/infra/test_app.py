"""app.py end to end: the SLO checks make `python app.py` exit non-zero with the reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def synth_with(context: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "-c", context],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_app_refuses_slow_poll_interval() -> None:
    result = synth_with("poll_interval_seconds=900")
    assert result.returncode != 0
    assert "SLO cannot be met" in result.stderr


def test_app_refuses_a_peak_rate_it_cannot_drain_and_shows_the_arithmetic() -> None:
    result = synth_with("peak_events_per_second=2000")
    assert result.returncode != 0
    assert "peak event rate cannot be drained" in result.stderr
    assert "120000 x 25 ms / 8 concurrent applies = 375 s > 60 s poller timeout" in result.stderr
