"""Import direction is a contract (pyproject.toml's import-linter contracts): each layer of
sendledger imports only the layers below it, every import counted (module level, in a function,
under TYPE_CHECKING), and no module of sendledger escapes the layers."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "functions" / "sendledger"


def test_the_import_contracts_are_kept():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_module_of_sendledger_has_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "layers")
    layered = {name.strip() for row in contract["layers"] for name in row.split("|")}
    top_level = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    top_level |= {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert top_level == layered
