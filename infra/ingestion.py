"""Delivery-event ingestion: the scheduled poller (every enabled provider's lanes, unknown
resolution, escalation). Each provider's construct grants it what its lanes read."""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra import constants as c
from infra.data import LedgerData
from infra.lambdas import SendledgerFunction, xray_and_publish_reason
from infra.queues import dead_letter_queue
from infra.settings import Settings
from sendledger import names


class Ingestion(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        data: LedgerData,
        code: lambda_.Code,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy

        # Async invocations (the schedule) that fail after retries land here.
        self.poller_dlq = dead_letter_queue(self, "PollerDlq")

        self.poller = SendledgerFunction(
            self,
            c.POLLER_FUNCTION_ID,
            description="Applies every provider's events, resolves unknowns, escalates",
            handler=names.POLLER_HANDLER,
            code=code,
            environment=environment,
            timeout=cdk.Duration.seconds(c.POLLER_TIMEOUT_SECONDS),
            log_retention=settings.log_retention,
            removal_policy=removal,
            dead_letter_queue=self.poller_dlq,
            statements=[data.item_access(with_due_work_index=True), data.due_work_scan()],  # queues: Messaging.grant
            resource_star_reason=xray_and_publish_reason("poller"),
        )

        # --- Triggers --------------------------------------------------------------------------
        self.schedule = events.Rule(
            self,
            "PollSchedule",
            description="sendledger poll cycle (POLL_INTERVAL_SECONDS)",
            schedule=events.Schedule.rate(cdk.Duration.seconds(settings.poll_interval_seconds)),
        )
        self.schedule.add_target(
            targets.LambdaFunction(
                self.poller.function,
                dead_letter_queue=self.poller_dlq,
                retry_attempts=2,
                # A poll older than one interval is superseded by the next one.
                max_event_age=cdk.Duration.seconds(max(settings.poll_interval_seconds, 60)),
            )
        )
