"""The sendledger stack: data, messaging, ingestion, API and monitoring composed."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.api import Api
from infra.bundling import lambda_code
from infra.callers import CallerSecrets
from infra.checkov import CheckovSkips
from infra.data import LedgerData
from infra.environment import lambda_environment
from infra.flags import FeatureFlagsStore
from infra.ingestion import Ingestion
from infra.lambdas import RUNTIME
from infra.messaging import Messaging
from infra.monitoring import Monitoring
from infra.providers import Functions, build
from infra.settings import Settings
from infra.status_out import StatusOut


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
        # publish to topics under aws/sns.
        topic_key = kms.Key(
            self,
            "TopicKey",
            description="sendledger SNS topics (alarms, provider events)",
            enable_key_rotation=True,
            removal_policy=removal,
        )
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
        code = lambda_code(RUNTIME, bundle=settings.bundle)
        env = lambda_environment(settings, self.data, self.messaging, self.fingerprint_secret)
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
            messaging=self.messaging,
            code=code,
            environment=env,
        )
        self.api = Api(
            self,
            c.API_ID,
            settings=settings,
            data=self.data,
            code=code,
            environment=env,
            webhooks=[piece.webhook for piece in built if piece.webhook is not None],
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
            rest_api=self.api.rest_api,
            functions=[
                self.api.handler.function,
                self.ingestion.poller.function,
                *(fn.function for fn in provider_functions),
                *self.status_out.functions,
            ],
            dead_letter_queues={
                **{name: queue for piece in built for name, queue in piece.dead_letter_queues.items()},
                "EscalationDlq": self.messaging.escalation_dlq,
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
        for resources in self.providers.values():
            resources.grant(api=self.api.handler, poller=self.ingestion.poller)
            resources.attach(self.ingestion.poller)
        # The api decides sends and resets; the poller sends escalation fallbacks through the same path.
        for function in (self.api.handler, self.ingestion.poller):
            self.flags.grant_read(function.role)
        self._outputs()
        self._acknowledge()
        cdk.Aspects.of(self).add(CheckovSkips())

    def _outputs(self) -> None:
        outputs = {
            "ApiUrl": self.api.rest_api.url,
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
            webhook = resources.built.webhook
            if webhook is not None:
                outputs[webhook.output] = self.api.rest_api.url_for_path(webhook.path)
        for key, value in outputs.items():
            cdk.CfnOutput(self, key, value=value)

    def _acknowledge(self) -> None:
        # AwsCustomResource's provider function is a CDK-managed singleton at stack level.
        provider = self.node.try_find_child("AWS679f53fac002430cb0da5b7982bd2287")
        if provider is not None:
            nag.acknowledge(
                provider,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AWSLambdaBasicExecutionRole]",
                "CDK's AwsCustomResource provider (runs SetSMSAttributes at deploy time only) "
                "uses the AWS basic execution policy; its own API rights are scoped separately.",
            )
