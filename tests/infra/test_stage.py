"""The Stage a CDK Pipeline deploys synthesizes the same stack (nested cloud assembly)."""

from __future__ import annotations

import aws_cdk as cdk

from infra import constants as c
from infra.settings import Settings
from infra.stage import SendledgerStage
from tests.infra.conftest import FEATURE_FLAGS


def test_stage_synthesizes_the_stack() -> None:
    context = {**FEATURE_FLAGS, "bundle": "false"}
    app = cdk.App(context=context)
    stage = SendledgerStage(app, "Prod", settings=Settings.from_context({**context, "stage": "prod"}))
    assembly = stage.synth()
    (stack,) = assembly.stacks
    assert stack.stack_name == f"Prod-{c.STAGE_STACK_ID}"
    assert stack.template["Resources"]
