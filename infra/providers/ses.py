"""SES: the sender identity and a configuration set publishing events → SNS → SQS for the poller."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_ses as ses
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.lambdas import SendledgerFunction
from infra.providers import Built, Functions
from infra.queues import dead_letter_queue, only_producers, queue_with_dlq
from infra.settings import Settings
from sendledger.providers.ses.settings import ENV_CONFIGURATION_SET, ENV_EVENTS_QUEUE_URL, ENV_EVENTS_TOPIC_ARN

_SES_EVENTS = {
    "SEND": ses.EmailSendingEvent.SEND,
    "DELIVERY": ses.EmailSendingEvent.DELIVERY,
    "BOUNCE": ses.EmailSendingEvent.BOUNCE,
    "COMPLAINT": ses.EmailSendingEvent.COMPLAINT,
    "REJECT": ses.EmailSendingEvent.REJECT,
    "DELIVERY_DELAY": ses.EmailSendingEvent.DELIVERY_DELAY,
}
# SES events published to SNS (everything the parser understands).
SES_EVENT_TYPES = ("SEND", "DELIVERY", "BOUNCE", "COMPLAINT", "REJECT", "DELIVERY_DELAY")


class SesResources(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.sender_email = settings.sender_email
        # Named by CloudFormation: a replacement can create the new set before it deletes the old.
        self.configuration_set = ses.ConfigurationSet(
            self,
            "ConfigurationSet",
            reputation_metrics=True,
            sending_enabled=True,
            tls_policy=ses.ConfigurationSetTlsPolicy.REQUIRE,
        )
        self.configuration_set_name = self.configuration_set.configuration_set_name
        # Customer managed (topic_key): SES cannot publish to topics under aws/sns.
        self.events_topic = sns.Topic(self, "SesEventsTopic", master_key=topic_key, enforce_ssl=True)
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
            events=[_SES_EVENTS[name] for name in SES_EVENT_TYPES],
        )
        # Visibility covers a push-mode invocation six times over (AWS guidance for ESMs).
        self.events_queue, self.events_dlq = queue_with_dlq(
            self,
            "SesEventsQueue",
            visibility_timeout=cdk.Duration.seconds(6 * c.POLLER_TIMEOUT_SECONDS),
        )
        # Envelope kept (no raw delivery): the poller parses the SNS Notification body. An event SNS
        # cannot deliver after its retries (the queue's policy or key changed) waits in this DLQ, not lost.
        self.subscription_dlq = dead_letter_queue(self, "SesEventsSubscriptionDlq")
        self.events_topic.add_subscription(
            subs.SqsSubscription(self.events_queue, dead_letter_queue=self.subscription_dlq)
        )
        only_producers(self.subscription_dlq, sources=[self.events_topic.topic_arn])
        # Only the topic delivers here (the poller also refuses an envelope naming another topic).
        only_producers(self.events_queue, sources=[self.events_topic.topic_arn])
        only_producers(self.events_dlq)  # filled by the redrive alone
        self.identity = ses.EmailIdentity(
            self,
            "SenderIdentity",
            identity=ses.Identity.email(settings.sender_email),
            configuration_set=self.configuration_set,
        )
        self.built = Built(
            environment={
                ENV_CONFIGURATION_SET: self.configuration_set_name,
                ENV_EVENTS_QUEUE_URL: self.events_queue.queue_url,
                ENV_EVENTS_TOPIC_ARN: self.events_topic.topic_arn,
            },
            dead_letter_queues={"SesEventsDlq": self.events_dlq, "SesEventsSubscriptionDlq": self.subscription_dlq},
            event_queues={"SesEvents": self.events_queue},
            outputs={
                "SesConfigurationSetName": self.configuration_set_name,
                "SesEventsQueueUrl": self.events_queue.queue_url,
            },
        )

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        return []

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        api.role.add_to_policy(self.send_email_statement())
        # Retries after proven absence, escalation fallbacks and reset mails send like the API does.
        poller.role.add_to_policy(self.send_email_statement())
        poller.role.add_to_policy(
            iam.PolicyStatement(actions=list(c.EVENT_QUEUE_CONSUME_ACTIONS), resources=[self.events_queue.queue_arn])
        )

    def attach(self, poller: SendledgerFunction) -> None:
        if self.settings.push_mode:
            # Push mode: SQS invokes the same code at once; failures reported per message.
            poller.function.add_event_source(
                sources.SqsEventSource(
                    self.events_queue,
                    batch_size=c.PUSH_BATCH_SIZE,
                    report_batch_item_failures=True,
                    max_concurrency=2,
                )
            )
            nag.acknowledge(
                poller.function,
                "Serverless::Serverless-LambdaEventSourceMappingDestination",
                "An SQS event source takes no on-failure destination: the SES events queue's redrive "
                "policy moves a record that keeps failing to its DLQ (alarmed).",
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


CONSTRUCT_ID = "Ses"
RESOURCES = SesResources
