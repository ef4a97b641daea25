"""Count the upward imports and the import cycles of functions/sendledger.

    .venv/bin/python scripts/import_layers.py [functions-dir]

Reads the layer order from pyproject.toml's layers contract (the one `make imports` checks), builds
the import graph with grimp (import-linter's engine: module-level, in-function and TYPE_CHECKING
imports alike), and prints every import from a module to one in a higher layer, or between two
independent layers, with those the contract allows marked, then each cycle (a strongly connected
set of modules). The optional argument points at another checkout's functions/ to count its tree.
"""

from __future__ import annotations

import fnmatch
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sendledger"


def layers() -> tuple[list[list[str]], list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "layers")
    rows = [[f"{PACKAGE}.{name.strip()}" for name in row.split("|")] for row in contract["layers"]]
    return rows, contract.get("ignore_imports", [])


def rank_of(module: str, rows: list[list[str]]) -> tuple[int, str] | None:
    for rank, row in enumerate(rows):
        for layer in row:
            if module == layer or module.startswith(layer + "."):
                return rank, layer
    return None


def upward_imports(graph: grimp.ImportGraph, rows: list[list[str]]) -> list[tuple[str, str]]:
    found = []
    for importer in sorted(graph.modules):
        mine = rank_of(importer, rows)
        if mine is None:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            theirs = rank_of(imported, rows)
            if theirs is None:
                continue
            # A higher layer has a lower rank; same-row siblings are independent of each other.
            if theirs[0] < mine[0] or (theirs[0] == mine[0] and theirs[1] != mine[1]):
                found.append((importer, imported))
    return found


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def main() -> int:
    functions = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "functions"
    sys.path.insert(0, str(functions))
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    rows, allowed = layers()
    upward = upward_imports(graph, rows)
    tolerated = [edge for edge in upward if any(fnmatch.fnmatch(f"{edge[0]} -> {edge[1]}", rule) for rule in allowed)]
    for importer, imported in upward:
        mark = "  (allowed by the contract)" if (importer, imported) in tolerated else ""
        print(f"upward: {importer} -> {imported}{mark}")
    found = cycles(graph)
    for component in found:
        print(f"cycle of {len(component)}: {', '.join(component)}")
    print(
        f"{len(upward)} upward imports ({len(upward) - len(tolerated)} not allowed), "
        f"{len(found)} cycles ({sum(len(c) for c in found)} modules)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
