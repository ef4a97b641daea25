"""`make bench`: the quality bars measured against moto, side by side with a baseline.

Run from the repository root: ``python -m benchmarks``. Writes ``benchmarks/results.json`` and
``benchmarks/README.md`` (generated) and exits non-zero when a bar is missed.
"""
