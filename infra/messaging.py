"""The escalation queue: messages that failed or missed their deadline, with their history."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from infra.queues import queue_with_dlq


class Messaging(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.escalation_queue, self.escalation_dlq = queue_with_dlq(
            self, "EscalationQueue", visibility_timeout=cdk.Duration.seconds(60)
        )
