"""The stack's own queues: escalations (messages that failed or missed their deadline, with
their history) and test mode's simulated provider events (never a provider's own queue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra import constants as c
from infra.queues import only_producers, queue_with_dlq

if TYPE_CHECKING:
    from infra.lambdas import SendledgerFunction


class Messaging(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.escalation_queue, self.escalation_dlq = queue_with_dlq(
            self, "EscalationQueue", visibility_timeout=cdk.Duration.seconds(60)
        )
        # A test caller's simulated outcomes (providers/simulated/outlets.py): the poller drains them
        # and applies only events that name a test caller, in that caller's namespace.
        self.test_outcomes_queue, self.test_outcomes_dlq = queue_with_dlq(
            self, "TestOutcomesQueue", visibility_timeout=cdk.Duration.seconds(6 * c.POLLER_TIMEOUT_SECONDS)
        )

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        """The poller escalates and drains test outcomes; a test caller's sends queue them (the api's
        first attempts, the poller's resends and fallbacks). Nobody else sends to either queue."""
        poller.role.add_to_policy(
            iam.PolicyStatement(
                actions=list(c.EVENT_QUEUE_CONSUME_ACTIONS), resources=[self.test_outcomes_queue.queue_arn]
            )
        )
        only_producers(self.escalation_queue, roles=[poller.role])
        only_producers(self.test_outcomes_queue, roles=[api.role, poller.role])
        only_producers(self.escalation_dlq, self.test_outcomes_dlq)  # filled by their redrive alone
