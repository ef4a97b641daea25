"""Copies the committed run's figures into the prose that quotes them (never by hand).

A figure in docs/benchmarks.md or the README is written as ``<!-- bench:PATH -->VALUE<!-- /bench -->``, PATH a
dotted path into benchmarks/results.json; this rewrites every VALUE from the results. `make
bench` runs it after each run; ``python -m benchmarks.docs_figures`` (``make bench-docs``)
copies the committed results.json again, and tests/docs/test_bench_figures.py checks that the
prose and the results agree.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from benchmarks.bars import figure
from benchmarks.markdown import fmt

DOCS = ("docs/benchmarks.md", "README.md")
MARKER = re.compile(r"<!-- bench:(?P<path>[\w.]+) -->(?P<value>.*?)<!-- /bench -->")


def render(text: str, results: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        path = match.group("path")
        return f"<!-- bench:{path} -->{fmt(figure(results, path))}<!-- /bench -->"

    return MARKER.sub(value, text)


def update(root: Path, results: dict[str, Any]) -> list[Path]:
    changed = []
    for name in DOCS:
        path = root / name
        if not path.exists():
            continue
        text = path.read_text()
        rendered = render(text, results)
        if rendered != text:
            path.write_text(rendered)
            changed.append(path)
    return changed


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    results = json.loads((root / "benchmarks" / "results.json").read_text())
    for path in update(root, results):
        print(f"updated {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
