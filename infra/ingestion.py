"""Delivery-event ingestion: the scheduled poller (SES queue, SMS log reconciliation, unknown
resolution, escalation) and the SMS delivery-status subscription handler."""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_logs_destinations as log_destinations
from constructs import Construct

from infra import constants as c
from infra.checkov import sms_only_deny
from infra.data import LedgerData
from infra.lambdas import SendledgerFunction, xray_and_publish_reason
from infra.messaging import Messaging
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
        messaging: Messaging,
        code: lambda_.Code,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy

        # Async invocations (schedule, log subscription) that fail after retries land here.
        self.poller_dlq = dead_letter_queue(self, "PollerDlq")
        self.sms_logs_dlq = dead_letter_queue(self, "SmsDeliveryLogsDlq")

        self.poller = SendledgerFunction(
            self,
            c.POLLER_FUNCTION_ID,
            description="Drains SES events, reconciles SMS logs, resolves unknowns, escalates",
            handler=names.POLLER_HANDLER,
            code=code,
            environment=environment,
            timeout=cdk.Duration.seconds(c.POLLER_TIMEOUT_SECONDS),
            log_retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal,
            dead_letter_queue=self.poller_dlq,
            statements=[
                data.item_access(with_due_work_index=True),
                iam.PolicyStatement(
                    actions=list(c.SES_QUEUE_CONSUME_ACTIONS),
                    resources=[messaging.events_queue.queue_arn],
                ),
                iam.PolicyStatement(
                    actions=["logs:FilterLogEvents"],
                    resources=[g.log_group_arn for g in messaging.sms_log_groups],
                ),
                # Retries after proven absence and escalation fallbacks send like the API does.
                *messaging.send_email_statements(settings),
                iam.PolicyStatement(actions=[c.SMS_PUBLISH_ACTION], resources=["*"]),
                sms_only_deny(),
                iam.PolicyStatement(
                    actions=["sqs:SendMessage"],
                    resources=[messaging.escalation_queue.queue_arn],
                ),
            ],
            resource_star_reason=xray_and_publish_reason("poller"),
        )

        self.sms_delivery_logs = SendledgerFunction(
            self,
            c.SMS_LOGS_FUNCTION_ID,
            description="Applies SNS SMS delivery-status records from CloudWatch Logs",
            handler=names.SMS_DELIVERY_LOGS_HANDLER,
            code=code,
            environment=environment,
            timeout=cdk.Duration.seconds(c.SMS_LOGS_TIMEOUT_SECONDS),
            memory_size=256,
            log_retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal,
            dead_letter_queue=self.sms_logs_dlq,
            statements=[data.item_access(with_due_work_index=True)],
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
        for group_id, group in (
            ("SmsSuccessSubscription", messaging.sms_success_logs),
            ("SmsFailureSubscription", messaging.sms_failure_logs),
        ):
            logs.SubscriptionFilter(
                self,
                group_id,
                log_group=group,
                destination=log_destinations.LambdaDestination(self.sms_delivery_logs.function),
                filter_pattern=logs.FilterPattern.all_events(),
            )

        if settings.push_mode:
            # Push mode: SQS invokes the same code at once; failures reported per message.
            self.poller.function.add_event_source(
                sources.SqsEventSource(
                    messaging.events_queue,
                    batch_size=c.PUSH_BATCH_SIZE,
                    report_batch_item_failures=True,
                    max_concurrency=2,
                )
            )
