"""CDK context `templates_dir`: the deployer's folder is checked at synth with the rules a
caller's publish meets, and reaches the Lambdas as TEMPLATES_DIR in the asset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infra import templates
from infra.settings import Settings, SettingsError
from sendledger import names

ROOT = Path(__file__).resolve().parents[2]
RESET = {"params": ["reset_link"], "email": {"subject": "Reset", "text": "${reset_link}"}}


def folder(tmp_path: Path, files: dict[str, object]) -> Path:
    for name, body in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body if isinstance(body, str) else json.dumps(body))
    return tmp_path


def test_the_shipped_folder_passes_and_needs_no_environment() -> None:
    assert templates.problems("") == []
    assert templates.environment("") == {}


def test_a_broken_template_refuses_the_synth_with_each_problem_named(tmp_path: Path) -> None:
    root = folder(
        tmp_path,
        {
            "password-reset/1.json": RESET,
            "promo/1.json": {"params": ["name"], "email": {"subject": "Hi\n", "text": "${who}"}},
            "notes/2.json": "{not json",
        },
    )
    with pytest.raises(SettingsError) as refused:
        Settings.from_context({"templates_dir": str(root)})
    text = str(refused.value)
    assert "promo/1.json: email.subject: must be one line" in text
    assert "promo/1.json: email.text: ${who} is not a declared param" in text
    assert "promo/1.json: params: 'name' is declared but used nowhere" in text
    assert "notes/2.json: not JSON" in text


def test_a_folder_without_the_reset_mail_is_refused(tmp_path: Path) -> None:
    root = folder(tmp_path, {"alert/1.json": {"params": [], "sms": {"text": "x"}}})
    assert templates.problems(str(root)) == ["templates_dir: no password-reset/<version>.json (the reset flow's mail)"]


def test_a_good_folder_is_bundled_and_named_in_the_environment(tmp_path: Path) -> None:
    root = folder(tmp_path, {"password-reset/1.json": RESET})
    settings = Settings.from_context({"templates_dir": str(root)})
    assert settings.templates_dir == str(root)
    assert templates.environment(str(root)) == {names.ENV_TEMPLATES_DIR: "/var/task/deployment_templates"}


def test_python_app_py_exits_non_zero_for_a_broken_folder(tmp_path: Path) -> None:
    root = folder(tmp_path, {"password-reset/1.json": {"params": [], "email": {"subject": "s", "text": "t"}}})
    result = subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "-c", f"templates_dir={root}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "password-reset/1.json: params: a password-reset template must declare reset_link" in result.stderr
