"""cdk.json's app command runs as the CDK CLI runs it: from the repository root, venv not activated."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CDK_JSON = json.loads((ROOT / "cdk.json").read_text())


def test_the_app_command_finds_the_cdk_libraries_without_an_activated_venv(tmp_path: Path) -> None:
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin))
    env = {key: value for key, value in os.environ.items() if key not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    # What `npx aws-cdk@2 ls` hands the app: the context (cdk.json's, plus -c) and an output dir.
    # A stage the settings refuse makes the run end right after the imports, not after a synth.
    context = {**CDK_JSON["context"], "stage": "Not A Stage!"}
    env.update({"PATH": path, "CDK_CONTEXT_JSON": json.dumps(context), "CDK_OUTDIR": str(tmp_path)})
    result = subprocess.run(
        CDK_JSON["app"], shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert "ModuleNotFoundError" not in result.stderr
    assert result.returncode == 2, result.stderr
    assert "synthesis refused" in result.stderr and "Not A Stage!" in result.stderr
