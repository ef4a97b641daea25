"""The moto patches refuse to load on a moto release they were not written for, saying what to do."""

from __future__ import annotations

import importlib.util
import re
from importlib import metadata

import pytest

from local.moto_version import WRITTEN_FOR, UnsupportedMoto
from tests.local.local_support import REPO

PATCHES = ["moto_journal", "moto_sqs", "moto_serial"]


@pytest.mark.parametrize("patch", PATCHES)
def test_a_patch_refuses_to_load_on_another_moto(patch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "5.9.0" if name == "moto" else real(name))
    spec = importlib.util.spec_from_file_location(f"another_{patch}", REPO / "local" / f"{patch}.py")
    assert spec is not None and spec.loader is not None
    with pytest.raises(UnsupportedMoto) as refused:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))  # a fresh copy: nothing installed twice
    message = str(refused.value)
    assert f"local/{patch}.py" in message and "moto 5.9.0 is installed" in message
    assert "requirements-dev.txt" in message and "WRITTEN_FOR" in message


def test_the_pinned_moto_is_one_they_were_written_for() -> None:
    pinned = re.search(r"^moto\[server\]==(\S+)$", (REPO / "requirements-dev.txt").read_text(), re.MULTILINE)
    assert pinned is not None and pinned[1] in WRITTEN_FOR
    assert metadata.version("moto") in WRITTEN_FOR
