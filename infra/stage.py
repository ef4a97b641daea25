"""A Stage wrapping the stack, for CDK Pipelines (`pipeline.add_stage(SendledgerStage(...))`)."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from constructs import Construct

from infra import constants as c
from infra.settings import Settings
from infra.stack import SendledgerStack


class SendledgerStage(cdk.Stage):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.stack = SendledgerStack(self, c.STAGE_STACK_ID, settings=settings)
