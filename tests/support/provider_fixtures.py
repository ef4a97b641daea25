"""The provider reference payloads (tests/fixtures/provider-formats)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROVIDER_FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "provider-formats"


def provider_format(name: str) -> Any:
    return json.loads((PROVIDER_FORMATS / name).read_text())


def raw_http(name: str) -> str:
    return (PROVIDER_FORMATS / name).read_text()
