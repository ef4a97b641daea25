"""Template tests synthesize without pip (bundle=false) and once per module."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Template

import infra  # noqa: F401  (puts functions/ on sys.path)
from infra.settings import Settings
from infra.stack import SendledgerStack

ROOT = Path(__file__).resolve().parents[2]
FEATURE_FLAGS = json.loads((ROOT / "cdk.json").read_text())["context"]


def synth(**overrides: Any) -> Template:
    context = {**FEATURE_FLAGS, "bundle": "false", **{k: str(v) for k, v in overrides.items()}}
    app = cdk.App(context=context)
    settings = Settings.from_context(context)
    stack = SendledgerStack(app, "test", settings=settings)
    return Template.from_stack(stack)


@cache
def default_template() -> Template:
    """The default settings' template, synthesized once per process for every module that reads it
    (each synthesis costs ~20 s of CPU; the tests only read it)."""
    return synth()


def resources(template: Template, kind: str) -> dict[str, Any]:
    found: dict[str, Any] = template.find_resources(kind)
    return found
