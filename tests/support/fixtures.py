"""The AWS reference payloads every suite compares against (tests/fixtures/aws-formats)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AWS_FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "aws-formats"


def aws_format(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((AWS_FORMATS / name).read_text())
    return loaded
