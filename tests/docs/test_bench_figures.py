"""The benchmark figures quoted in the docs are the committed run's (copied by a script, never by hand)."""

import json
from pathlib import Path

from benchmarks.docs_figures import DOCS, MARKER, render

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_quote_the_committed_results():
    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    for name in DOCS:
        text = (ROOT / name).read_text()
        assert MARKER.search(text), f"{name} quotes no benchmark figure"
        assert render(text, results) == text, f"{name}: run `make bench-docs` (python -m benchmarks.docs_figures)"
