"""The sendledger stack: data, messaging, ingestion, API and monitoring composed."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import constants as c
from infra import nag, templates
from infra.api import Api
from infra.bundling import lambda_code
from infra.callers import CallerSecrets
from infra.checkov import CheckovSkips
from infra.data import LedgerData
from infra.encryption import EncryptLogGroups, stack_key
from infra.environment import lambda_environment
from infra.flags import FeatureFlagsStore
from infra.ingestion import Ingestion
from infra.lambdas import RUNTIME
from infra.messaging import Messaging
from infra.monitoring import Monitoring
from infra.providers import Functions, build
from infra.queues import only_producers
from infra.settings import Settings
from infra.status_out import StatusOut
from infra.webhooks import WebhookIntake


class SendledgerStack(cdk.Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any) -> None:
        settings.check_deployable()  # also when built by a pipeline, not only by app.py
        kwargs.setdefault("description", f"sendledger ({settings.stage})")
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings
        # CDK makes each Lambda DependsOn its role although Role: GetAtt already orders them;
        # cfn-lint's W3005 flags that redundancy in generated code we do not control.
        self.template_options.metadata = {"cfn-lint": {"config": {"ignore_checks": ["W3005"]}}}
        removal = settings.removal_policy

        # Customer managed: AWS services (CloudWatch alarms, provider event publishing) cannot
        # publish to topics under aws/sns; the same key encrypts every log group (infra/encryption.py).
        topic_key = stack_key(self, "TopicKey", removal_policy=removal)
        self.data = LedgerData(self, c.DATA_ID, is_dev=settings.is_dev)
        self.messaging = Messaging(self, c.MESSAGING_ID)
        # Only the providers this deployment enables: their secrets, queues, topics, log groups.
        self.providers = {
            provider.value: build(self, provider.value, settings=settings, topic_key=topic_key)
            for provider in settings.enabled_providers
        }
        # HMAC key of the recipient fingerprints in logs, history and SES event ids.
        self.fingerprint_secret = secretsmanager.Secret(
            self,
            "RecipientFingerprintKey",
            description="sendledger: key of recipient fingerprints (HMAC-SHA256); never rotated",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True, include_space=False
            ),
            removal_policy=removal,
        )
        nag.acknowledge(
            self.fingerprint_secret,
            "AwsSolutions-SMG4",
            "Not rotated on purpose: it keys recipient fingerprints, which are also part of SES event "
            "deduplication ids; a new key would re-apply redelivered events and break log correlation.",
        )
        nag.acknowledge_aws_managed_secret_key(self.fingerprint_secret)
        custom = templates.folder_of(settings.templates_dir) if templates.is_custom(settings.templates_dir) else None
        code = lambda_code(RUNTIME, bundle=settings.bundle, templates=custom)
        env = lambda_environment(settings, self.data, self.messaging, self.fingerprint_secret)
        env.update(templates.environment(settings.templates_dir))
        self.flags = FeatureFlagsStore(self, "FeatureFlags", stage=settings.stage)
        env.update(self.flags.lambda_environment())
        self.caller_secrets = CallerSecrets(self, "CallerSecrets", stage=settings.stage)
        env.update(self.caller_secrets.environment)
        for resources in self.providers.values():
            env.update(resources.built.environment)
        built = [resources.built for resources in self.providers.values()]
        self.ingestion = Ingestion(
            self,
            c.INGESTION_ID,
            settings=settings,
            data=self.data,
            code=code,
            environment=env,
        )
        # Each provider that pushes: its webhook route in a function of its own (infra/webhooks.py).
        self.webhooks = [
            WebhookIntake(
                self,
                f"{piece.webhook.provider.capitalize()}Webhook",
                webhook=piece.webhook,
                settings=settings,
                data=self.data,
                code=code,
                environment=env,
            )
            for piece in built
            if piece.webhook is not None
        ]
        self.api = Api(
            self,
            c.API_ID,
            settings=settings,
            data=self.data,
            code=code,
            environment=env,
            webhooks=self.webhooks,
        )
        context = Functions(code=code, environment=env, data=self.data, settings=settings)
        provider_functions = [fn for resources in self.providers.values() for fn in resources.functions(context)]
        self.status_out = StatusOut(
            self, c.STATUS_OUT_ID, settings=settings, data=self.data, code=code, environment=env
        )
        self.monitoring = Monitoring(
            self,
            c.MONITORING_ID,
            settings=settings,
            topic_key=topic_key,
            http_api=self.api.http_api,
            functions=[
                self.api.handler.function,
                self.ingestion.poller.function,
                *(fn.function for fn in provider_functions),
                *(intake.function for intake in self.webhooks),
                *self.status_out.functions,
            ],
            dead_letter_queues={
                **{name: queue for piece in built for name, queue in piece.dead_letter_queues.items()},
                "EscalationDlq": self.messaging.escalation_dlq,
                "TestOutcomesDlq": self.messaging.test_outcomes_dlq,  # a refused test outcome waits here
                "PollerDlq": self.ingestion.poller_dlq,
                **self.status_out.dead_letter_queues,
            },
            event_queues={name: queue for piece in built for name, queue in piece.event_queues.items()},
            escalation_queue=self.messaging.escalation_queue,
        )
        self.status_out.alarm_iterator_age(self.monitoring.alarm_topic)
        self.caller_secrets.grant_admin(self.api.handler)
        self.caller_secrets.grant_callbacks(self.status_out.callbacks, self.data)
        # Every function gets the secret's ARN in its environment and fingerprints recipients.
        for function in (self.api.handler, self.ingestion.poller, *provider_functions):
            function.role.add_to_policy(
                iam.PolicyStatement(
                    actions=["secretsmanager:GetSecretValue"], resources=[self.fingerprint_secret.secret_arn]
                )
            )
        nag.acknowledge(
            self.status_out.callbacks,
            "Serverless::Serverless-LambdaEventSourceMappingDestination",
            "An SQS event source takes no on-failure destination: the callback queue's redrive policy "
            "moves a record to the callback DLQ (alarmed) after its attempts.",
        )
        for resources in self.providers.values():
            resources.grant(api=self.api.handler, poller=self.ingestion.poller)
            resources.attach(self.ingestion.poller)
        # The api decides sends and resets; the poller sends escalation fallbacks through the same path.
        for function in (self.api.handler, self.ingestion.poller):
            self.flags.grant_read(function.role)
        self._only_producers()
        self._outputs()
        self._acknowledge()
        cdk.Aspects.of(self).add(EncryptLogGroups(topic_key))
        cdk.Aspects.of(self).add(CheckovSkips())

    def _only_producers(self) -> None:
        """Every queue of the stack's own accepts SendMessage from its producers alone (infra/queues.py);
        the providers' queues are closed where they are built, the callback queue by status out."""
        poller = self.ingestion.poller
        self.messaging.grant(api=self.api.handler, poller=poller)
        # Dead-letter queues: a Lambda's failed async invocations (its role), an EventBridge target's
        # undeliverable events (the rule) or a stream's failed batch (the function's role).
        only_producers(self.ingestion.poller_dlq, roles=[poller.role], sources=[self.ingestion.schedule.rule_arn])
        only_producers(self.status_out.publisher_dlq, roles=[self.status_out.publisher.role])

    def _outputs(self) -> None:
        outputs = {
            "ApiUrl": self.api.url,
            "ClientInvokePolicyArn": self.api.client_policy.managed_policy_arn,
            "AdminInvokePolicyArn": self.api.admin_policy.managed_policy_arn,
            "LedgerTableName": self.data.table.table_name,
            "EscalationQueueUrl": self.messaging.escalation_queue.queue_url,
            "AlarmTopicArn": self.monitoring.alarm_topic.topic_arn,
            "EventBusName": self.status_out.bus.event_bus_name,
            "CallbackSecretPrefix": self.caller_secrets.prefix,
        }
        for resources in self.providers.values():
            outputs.update(resources.built.outputs)
        for intake in self.webhooks:
            outputs[intake.webhook.output] = self.api.url_for_path(intake.webhook.path)
        for key, value in outputs.items():
            cdk.CfnOutput(self, key, value=value)

    def _acknowledge(self) -> None:
        # AwsCustomResource's provider function is a CDK-managed singleton at stack level.
        provider = self.node.try_find_child("AWS679f53fac002430cb0da5b7982bd2287")
        if provider is not None:
            deploy_time_only = (
                "CDK's AwsCustomResource provider: runs SetSMSAttributes once per deployment, invoked "
                "synchronously by CloudFormation (which reports a failure), reaching only AWS APIs."
            )
            for rule in (
                "Serverless::Serverless-LambdaDLQ",
                "Serverless::Serverless-LambdaDefaultMemorySize",
                "Serverless::Serverless-LambdaTracing",
                "PCI.DSS.321::PCI.DSS.321-LambdaInsideVPC",
            ):
                nag.acknowledge(provider, rule, deploy_time_only)
            nag.acknowledge(
                provider,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AWSLambdaBasicExecutionRole]",
                "CDK's AwsCustomResource provider (runs SetSMSAttributes at deploy time only) "
                "uses the AWS basic execution policy; its own API rights are scoped separately.",
            )
