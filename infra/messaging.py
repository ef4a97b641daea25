"""Provider side: SES identity + configuration set -> SNS -> SQS, SNS SMS delivery logs,
and the escalation queue."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_ses as ses
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.queues import queue_with_dlq
from infra.settings import Settings
from sendledger.domain.provider import EmailProvider

_SES_EVENTS = {
    "SEND": ses.EmailSendingEvent.SEND,
    "DELIVERY": ses.EmailSendingEvent.DELIVERY,
    "BOUNCE": ses.EmailSendingEvent.BOUNCE,
    "COMPLAINT": ses.EmailSendingEvent.COMPLAINT,
    "REJECT": ses.EmailSendingEvent.REJECT,
    "DELIVERY_DELAY": ses.EmailSendingEvent.DELIVERY_DELAY,
}


class Messaging(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy
        self.sender_email = settings.sender_email

        # --- SES: configuration set publishing events to SNS -> SQS -------------------------
        self.configuration_set = ses.ConfigurationSet(
            self,
            "ConfigurationSet",
            configuration_set_name=f"{c.SES_CONFIGURATION_SET_PREFIX}-{settings.stage}",
            reputation_metrics=True,
            sending_enabled=True,
            tls_policy=ses.ConfigurationSetTlsPolicy.REQUIRE,
        )
        self.configuration_set_name = self.configuration_set.configuration_set_name
        self.events_topic = sns.Topic(self, "SesEventsTopic", master_key=topic_key, enforce_ssl=True)
        # SES publishes to the encrypted topic with the key; scoped to this account.
        topic_key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("ses.amazonaws.com")],
                actions=["kms:GenerateDataKey", "kms:Decrypt"],
                resources=["*"],  # in a key policy "*" is this key
                conditions={"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}},
            )
        )
        ses.ConfigurationSetEventDestination(
            self,
            "SesEventDestination",
            configuration_set=self.configuration_set,
            destination=ses.EventDestination.sns_topic(self.events_topic),
            events=[_SES_EVENTS[name] for name in c.SES_EVENT_TYPES],
        )
        # Visibility covers a push-mode invocation six times over (AWS guidance for ESMs).
        self.events_queue, self.events_dlq = queue_with_dlq(
            self,
            "SesEventsQueue",
            visibility_timeout=cdk.Duration.seconds(6 * c.POLLER_TIMEOUT_SECONDS),
        )
        # Envelope kept (no raw delivery): the poller parses the SNS Notification body.
        self.events_topic.add_subscription(subs.SqsSubscription(self.events_queue))

        self.identity = ses.EmailIdentity(
            self,
            "SenderIdentity",
            identity=ses.Identity.email(settings.sender_email),
            configuration_set=self.configuration_set,
        )

        # --- Escalation queue: messages that failed or missed their deadline ------------------
        self.escalation_queue, self.escalation_dlq = queue_with_dlq(
            self, "EscalationQueue", visibility_timeout=cdk.Duration.seconds(60)
        )

        # --- SNS SMS delivery-status logs ------------------------------------------------------
        prefix = f"sns/{cdk.Aws.REGION}/{cdk.Aws.ACCOUNT_ID}"
        self.sms_success_logs = logs.LogGroup(
            self,
            "SmsSuccessLogs",
            log_group_name=f"{prefix}/{c.SMS_SUCCESS_LOG_GROUP_SUFFIX}",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=removal,
        )
        self.sms_failure_logs = logs.LogGroup(
            self,
            "SmsFailureLogs",
            log_group_name=f"{prefix}/{c.SMS_FAILURE_LOG_GROUP_SUFFIX}",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=removal,
        )
        self.sms_log_groups = (self.sms_success_logs, self.sms_failure_logs)
        self.sms_delivery_status_role = iam.Role(
            self,
            "SmsDeliveryStatusRole",
            assumed_by=iam.ServicePrincipal(
                "sns.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}},
            ),
            description="SNS writes SMS delivery-status logs to the two sendledger log groups",
        )
        # SNS's documented action set for delivery-status logging, scoped to our log groups.
        self.sms_delivery_status_role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:PutMetricFilter",
                    "logs:PutRetentionPolicy",
                ],
                resources=[g.log_group_arn for g in self.sms_log_groups],
            )
        )
        self._sms_attributes()

    def _sms_attributes(self) -> None:
        """Account-level SNS SMS settings (no CloudFormation resource exists for them)."""
        call = cr.AwsSdkCall(
            service="SNS",
            action="SetSMSAttributes",
            parameters={
                "attributes": {
                    "DeliveryStatusIAMRole": self.sms_delivery_status_role.role_arn,
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
                    iam.PolicyStatement(
                        actions=["iam:PassRole"],
                        resources=[self.sms_delivery_status_role.role_arn],
                    ),
                ]
            ),
            install_latest_aws_sdk=False,
            log_group=logs.LogGroup(self, "SmsAttributesLogs", retention=logs.RetentionDays.ONE_MONTH),
        )
        nag.acknowledge(
            sms_attributes,
            "AwsSolutions-IAM5[Resource::*]",
            "sns:SetSMSAttributes is an account-level setting without resource-level "
            "permissions; iam:PassRole in the same policy is scoped to the delivery-status role.",
        )

    def send_email_statement(self) -> iam.PolicyStatement:
        """ses:SendEmail from the sender identity (address or its domain) via our config set."""
        stack = cdk.Stack.of(self)
        domain = self.sender_email.rsplit("@", 1)[1]
        return iam.PolicyStatement(
            actions=["ses:SendEmail"],
            resources=[
                stack.format_arn(service="ses", resource="identity", resource_name=identity)
                for identity in (self.sender_email, domain)
            ]
            + [
                stack.format_arn(
                    service="ses",
                    resource="configuration-set",
                    resource_name=self.configuration_set_name,
                )
            ],
            conditions={"StringEquals": {"ses:FromAddress": self.sender_email}},
        )

    def send_email_statements(self, settings: Settings) -> list[iam.PolicyStatement]:
        """What sending email needs: ses:SendEmail only when SES is the email provider."""
        return [self.send_email_statement()] if settings.email_provider is EmailProvider.SES else []
