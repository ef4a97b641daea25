"""The hexagon holds: the domain imports no AWS SDK, no persistence and no framework."""

import subprocess
import sys
from pathlib import Path

DOMAIN = Path(__file__).resolve().parents[2] / "functions" / "sendledger" / "domain"
FORBIDDEN = ("boto3", "botocore", "pynamodb", "aws_lambda_powertools", "pydantic")


def test_domain_modules_import_nothing_from_the_outside_world():
    modules = sorted(f"sendledger.domain.{path.stem}" for path in DOMAIN.glob("*.py") if path.stem != "__init__")
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({FORBIDDEN!r}))))\n"
    )
    functions = str(DOMAIN.parents[1])
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=functions)
    assert len(modules) >= 10
    assert result.stdout.strip() == ""
