"""app.py end to end: the SLO check makes `python app.py` exit non-zero with the reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_app_refuses_slow_poll_interval() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "-c", "poll_interval_seconds=900"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "SLO cannot be met" in result.stderr
