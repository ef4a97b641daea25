"""The receiver's verification recipe in docs/status-out.md, run as written: during a rotation a
receiver holding either secret verifies, one holding neither does not."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sendledger.domain.callbacks import signature

REPO = Path(__file__).resolve().parents[2]


def recipe() -> Any:
    text = (REPO / "docs" / "status-out.md").read_text()
    code = text.split("**Verify a callback**", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/status-out.md", "exec"), scope)  # our own documentation
    return scope["verify"]


def test_the_documented_recipe_verifies_with_either_secret_of_a_rotation() -> None:
    verify = recipe()
    body, now = b'{"id":"e-1","type":"sendledger.message.state-changed"}', int(time.time())
    rotating = {"Sendledger-Signature": signature(["new-secret", "old-secret"], now, body)}
    assert verify("new-secret", rotating, body) and verify("old-secret", rotating, body)
    assert not verify("neither", rotating, body)
    assert not verify("new-secret", rotating, body + b" ")
    stale = {"Sendledger-Signature": signature(["new-secret"], now - 301, body)}
    assert not verify("new-secret", stale, body)
