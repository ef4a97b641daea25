"""SNS (SMS): the delivery-status log groups SNS writes, the account's SMS settings, and the
subscription handler that applies each record as it is written (the poller reconciles the rest)."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_logs_destinations as log_destinations
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.checkov import sms_only_deny
from infra.lambdas import SendledgerFunction
from infra.providers import Built, Functions
from infra.queues import dead_letter_queue, only_producers
from infra.settings import Settings
from sendledger import names
from sendledger.providers.sns.settings import (
    ENV_FAILURE_LOG_GROUP,
    ENV_SUCCESS_LOG_GROUP,
    FAILURE_LOG_GROUP_SUFFIX,
    SUCCESS_LOG_GROUP_SUFFIX,
)


class SnsResources(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy
        # SNS names these groups itself: sns/<region>/<account>/DirectPublishToPhoneNumber[/Failure].
        prefix = f"sns/{cdk.Aws.REGION}/{cdk.Aws.ACCOUNT_ID}"
        self.success_logs = logs.LogGroup(
            self,
            "SmsSuccessLogs",
            log_group_name=f"{prefix}/{SUCCESS_LOG_GROUP_SUFFIX}",
            retention=settings.log_retention,
            removal_policy=removal,
        )
        self.failure_logs = logs.LogGroup(
            self,
            "SmsFailureLogs",
            log_group_name=f"{prefix}/{FAILURE_LOG_GROUP_SUFFIX}",
            retention=settings.log_retention,
            removal_policy=removal,
        )
        self.log_groups = (self.success_logs, self.failure_logs)
        self.delivery_status_role = iam.Role(
            self,
            "SmsDeliveryStatusRole",
            assumed_by=iam.ServicePrincipal(
                "sns.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}},
            ),
            description="SNS writes SMS delivery-status logs to the two sendledger log groups",
        )
        # SNS's documented action set for delivery-status logging, scoped to our log groups.
        self.delivery_status_role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:PutMetricFilter",
                    "logs:PutRetentionPolicy",
                ],
                resources=[group.log_group_arn for group in self.log_groups],
            )
        )
        nag.acknowledge(
            self.delivery_status_role,
            "PCI.DSS.321::PCI.DSS.321-IAMNoInlinePolicy",
            "SNS's delivery-status role for these two log groups alone: a managed policy would be "
            "attached to this role only, and could be attached elsewhere by mistake.",
        )
        self._sms_attributes(settings)
        # Async invocations of the subscription handler that fail after retries land here.
        self.logs_dlq = dead_letter_queue(self, "SmsDeliveryLogsDlq")
        self.built = Built(
            environment={
                ENV_SUCCESS_LOG_GROUP: self.success_logs.log_group_name,
                ENV_FAILURE_LOG_GROUP: self.failure_logs.log_group_name,
            },
            dead_letter_queues={"SmsDeliveryLogsDlq": self.logs_dlq},
        )

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        self.delivery_logs = SendledgerFunction(
            self,
            c.SMS_LOGS_FUNCTION_ID,
            description="Applies SNS SMS delivery-status records from CloudWatch Logs",
            handler=names.SMS_DELIVERY_LOGS_HANDLER,
            code=context.code,
            environment=context.environment,
            timeout=cdk.Duration.seconds(c.SMS_LOGS_TIMEOUT_SECONDS),
            memory_size=256,
            log_retention=context.settings.log_retention,
            removal_policy=context.settings.removal_policy,
            dead_letter_queue=self.logs_dlq,
            statements=[context.data.item_access(with_due_work_index=True)],
        )
        # The handler's failed async invocations, sent by Lambda under its role; nobody else.
        only_producers(self.logs_dlq, roles=[self.delivery_logs.role])
        for group_id, group in (
            ("SmsSuccessSubscription", self.success_logs),
            ("SmsFailureSubscription", self.failure_logs),
        ):
            logs.SubscriptionFilter(
                self,
                group_id,
                log_group=group,
                destination=log_destinations.LambdaDestination(self.delivery_logs.function),
                filter_pattern=logs.FilterPattern.all_events(),
            )
        return [self.delivery_logs]

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        for function in (api, poller):  # both send SMS (the poller: resends, fallbacks)
            function.role.add_to_policy(iam.PolicyStatement(actions=[c.SMS_PUBLISH_ACTION], resources=["*"]))
            function.role.add_to_policy(sms_only_deny())
        poller.role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:FilterLogEvents"], resources=[group.log_group_arn for group in self.log_groups]
            )
        )

    def attach(self, poller: SendledgerFunction) -> None:
        return None

    def _sms_attributes(self, settings: Settings) -> None:
        """Account-level SNS SMS settings (no CloudFormation resource exists for them)."""
        call = cr.AwsSdkCall(
            service="SNS",
            action="SetSMSAttributes",
            parameters={
                "attributes": {
                    "DeliveryStatusIAMRole": self.delivery_status_role.role_arn,
                    "DeliveryStatusSuccessSamplingRate": "100",
                    "DefaultSMSType": "Transactional",
                }
            },
            physical_resource_id=cr.PhysicalResourceId.of("sendledger-sms-attributes"),
        )
        sms_attributes = cr.AwsCustomResource(
            self,
            "SmsAttributes",
            on_create=call,
            on_update=call,
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [
                    iam.PolicyStatement(actions=[c.SET_SMS_ATTRIBUTES_ACTION], resources=["*"]),
                    iam.PolicyStatement(actions=["iam:PassRole"], resources=[self.delivery_status_role.role_arn]),
                ]
            ),
            install_latest_aws_sdk=False,
            log_group=logs.LogGroup(
                self, "SmsAttributesLogs", retention=settings.log_retention, removal_policy=settings.removal_policy
            ),
        )
        nag.acknowledge(
            sms_attributes,
            "AwsSolutions-IAM5[Resource::*]",
            "sns:SetSMSAttributes is an account-level setting without resource-level "
            "permissions; iam:PassRole in the same policy is scoped to the delivery-status role.",
        )
        nag.acknowledge(
            sms_attributes,
            "PCI.DSS.321::PCI.DSS.321-IAMNoInlinePolicy",
            "CDK's AwsCustomResource writes its deploy-time rights (SetSMSAttributes, PassRole of one "
            "role) as the provider's own policy; nothing else uses them.",
        )


CONSTRUCT_ID = "Sns"
RESOURCES = SnsResources
