"""The provider reference payloads (tests/fixtures/provider-formats): JSON bodies and raw HTTP answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROVIDER_FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "provider-formats"


def provider_format(name: str) -> Any:
    return json.loads((PROVIDER_FORMATS / name).read_text())


@dataclass(frozen=True)
class RawAnswer:
    case: str
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


def raw_answers(name: str) -> list[RawAnswer]:
    """The HTTP responses of a `.txt` sample; several are separated by `### <case>` lines."""
    text = (PROVIDER_FORMATS / name).read_text()
    chunks = [chunk for chunk in text.split("### ") if chunk.strip()] if "### " in text else [f"-\n{text}"]
    answers = []
    for chunk in chunks:
        case, _, message = chunk.partition("\n")
        head, _, body = message.partition("\n\n")
        status_line, *header_lines = head.splitlines()
        headers = {}
        for line in header_lines:
            name_, _, value = line.partition(":")
            headers[name_.strip().lower()] = value.strip()
        answers.append(RawAnswer(case.strip(), int(status_line.split()[1]), headers, body.strip().encode()))
    return answers
