"""Bundling decisions that need no pip: what is shipped and what invalidates the asset."""

from __future__ import annotations

import marshal
import shutil
import sys
from pathlib import Path

from infra.bundling import (
    PipLocalBundling,
    bytecode_interpreter,
    compile_bytecode,
    filtered_requirements,
    source_hash,
)


def test_runtime_provided_distributions_are_not_installed() -> None:
    text = "# c\nboto3==1.0\nbotocore==1.0  # x\naws-lambda-powertools[tracer]==3.37.0\nPyNamoDB==6.1.0\n"
    assert filtered_requirements(text) == "aws-lambda-powertools[tracer]==3.37.0\nPyNamoDB==6.1.0\n"


def test_asset_hash_covers_requirements_and_platform() -> None:
    assert source_hash("req-a") != source_hash("req-b")
    assert source_hash("req-a") == source_hash("req-a")


def _this_python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def test_bytecode_is_compiled_by_an_interpreter_of_the_runtimes_version_and_unchecked(tmp_path: Path) -> None:
    # Lambda's code is read-only: a module without its .pyc is compiled by every new container.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("VALUE = 42\n")
    unused = tmp_path / "phonenumbers" / "geodata"
    unused.mkdir(parents=True)
    (unused / "data0.py").write_text("DATA = {}\n")
    interpreter = bytecode_interpreter(_this_python())
    assert interpreter == sys.executable
    compile_bytecode(tmp_path, interpreter)
    [compiled] = (tmp_path / "pkg" / "__pycache__").glob("__init__.*.pyc")
    # PEP 552 flags: hash-based (bit 0) and not checked against the source (bit 1 clear), so a
    # source whose timestamp the zip did not keep is never compiled again.
    assert int.from_bytes(compiled.read_bytes()[4:8], "little") == 0b01
    # Tracebacks name where the module runs, not the machine that built the asset.
    assert marshal.loads(compiled.read_bytes()[16:]).co_filename == "/var/task/pkg/__init__.py"
    assert not (unused / "__pycache__").exists()  # never imported: no bytecode to grow the asset


def test_without_an_interpreter_of_the_runtimes_version_the_asset_ships_sources(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert bytecode_interpreter("3.99") is None
    bundler = PipLocalBundling("3.99")
    assert bundler.form == "sources"
    assert PipLocalBundling(_this_python()).form == "bytecode"


def test_a_python_on_path_that_reports_another_version_is_not_taken(monkeypatch) -> None:
    # `python3.99` on PATH that is really this interpreter (a symlink gone wrong): its bytecode
    # would not load on the runtime, so the asset ships sources.
    monkeypatch.setattr(shutil, "which", lambda name: sys.executable if name == "python3.99" else None)
    assert bytecode_interpreter("3.99") is None
