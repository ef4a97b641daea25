"""Size of the bundled Lambda code asset (unzipped, as Lambda's 250 MB limit counts it).

Runs the project's own bundling (infra/bundling.py: `PipLocalBundling.try_bundle`) into a
temporary directory, in a child process (it imports aws_cdk, which starts a jsii node
process). The pip step is never run here: when the dependency cache under build/lambda-deps is
missing the child refuses it and the figure falls back to the largest `cdk.out/asset.*`
directory of the last `python app.py` (said so in the result).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

_CHILD = r"""
import json, os, sys, tempfile, zipfile
sys.path[:0] = [{root!r}, {functions!r}]
from infra import bundling
from infra.lambdas import RUNTIME

def refuse(*args, **kwargs):
    raise RuntimeError("dependency cache missing (the benchmark does not run pip)")

bundling.subprocess.run = refuse
version = RUNTIME.name.removeprefix("python")
with tempfile.TemporaryDirectory() as out:
    bundling.PipLocalBundling(version).try_bundle(out, image=None)
    total = files = 0
    top = {{}}
    for dirpath, _, names in os.walk(out):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            size = os.path.getsize(path)
            total += size
            files += 1
            head = os.path.relpath(path, out).split(os.sep)[0]
            top[head] = top.get(head, 0) + size
    zipped = os.path.join(tempfile.gettempdir(), "sendledger-bench-asset.zip")
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for dirpath, _, names in os.walk(out):
            for name in names:
                path = os.path.join(dirpath, name)
                archive.write(path, os.path.relpath(path, out))
    zip_bytes = os.path.getsize(zipped)
    os.unlink(zipped)
largest = sorted(top.items(), key=lambda kv: -kv[1])[:8]
print("ASSET_JSON " + json.dumps({{"bytes": total, "files": files, "zip_bytes": zip_bytes,
    "runtime": RUNTIME.name, "largest_top_level": dict(largest)}}))
"""


def measure(root: Path) -> dict[str, Any]:
    code = _CHILD.format(root=str(root), functions=str(root / "functions"))
    env = {
        **os.environ,
        "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    try:
        completed = subprocess.run(
            [sys.executable, "-c", code],
            cwd=str(root),
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
            check=False,
        )
        for line in completed.stdout.splitlines():
            if line.startswith("ASSET_JSON "):
                result: dict[str, Any] = json.loads(line.split(" ", 1)[1])
                result["method"] = "infra.bundling.PipLocalBundling.try_bundle into a temporary directory"
                return result
        reason = ((completed.stderr or "").strip().splitlines() or ["no output"])[-1]
    except subprocess.TimeoutExpired:
        reason = "bundling timed out"
    return _from_cdk_out(root, reason)


def _from_cdk_out(root: Path, reason: str) -> dict[str, Any]:
    assets = [p for p in (root / "cdk.out").glob("asset.*") if p.is_dir()]
    if not assets:
        return {
            "bytes": None,
            "reason": f"not available: bundling failed ({reason}) and no cdk.out/asset.* (run `make synth`)",
        }
    sizes = {p: _tree_bytes(p) for p in assets}
    largest = max(sizes, key=lambda p: sizes[p])
    return {
        "bytes": sizes[largest],
        "files": sum(1 for f in largest.rglob("*") if f.is_file()),
        "zip_bytes": _zip_bytes(largest),
        "method": f"largest cdk.out asset directory ({largest.name}); own bundling unavailable: {reason}",
    }


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def _zip_bytes(path: Path) -> int:
    import tempfile

    with tempfile.TemporaryFile() as handle:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for file in path.rglob("*"):
                if file.is_file():
                    archive.write(file, file.relative_to(path))
        handle.seek(0, 2)
        return handle.tell()
