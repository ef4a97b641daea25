"""`make bench`: the quality bars measured against moto, side by side with a baseline.

Run from the repository root: ``python -m benchmarks``. Writes ``benchmarks/results.json`` and
``benchmarks/README.md`` (generated). Exits non-zero only when a measurement errored; a bar
that is not met is reported as not met.
"""
