"""Mailgun: its two keys in Secrets Manager and who may read them, and its webhook events queue.

The secrets are created with a generated placeholder; the operator puts Mailgun's API key and
HTTP webhook signing key in after the first deploy (docs/providers.md). The api Lambda sends, the
webhook's intake function verifies and queues (infra/webhooks.py), the poller resends and reads the
Events API: the signing key is the intake's alone.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import constants as c
from infra import nag
from infra.lambdas import SendledgerFunction
from infra.providers import Built, Functions, Webhook
from infra.queues import only_producers, queue_with_dlq
from infra.settings import Settings
from sendledger import names
from sendledger.providers.mailgun import NAME
from sendledger.providers.mailgun.settings import (
    ENV_API_KEY_SECRET_ARN,
    ENV_EVENTS_QUEUE_URL,
    ENV_SIGNING_KEY_SECRET_ARN,
)

_ROTATION = (
    "Mailgun keys are issued and rotated in Mailgun's control panel, not by an AWS rotation "
    "Lambda; the functions re-read the secret every 5 minutes, so a rotated value is picked up."
)


class MailgunSecrets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy
        self.api_key = self._secret("ApiKey", "Mailgun API key (Basic auth api:<key>)", removal)
        self.signing_key = self._secret("WebhookSigningKey", "Mailgun HTTP webhook signing key (HMAC-SHA256)", removal)
        # Verified webhook events wait here for the poller, one event per message.
        self.events_queue, self.events_dlq = queue_with_dlq(
            self, "EventsQueue", visibility_timeout=cdk.Duration.seconds(6 * c.POLLER_TIMEOUT_SECONDS)
        )
        only_producers(self.events_dlq)  # filled by the redrive alone; the queue's producer: infra/webhooks.py
        self.built = Built(
            environment={
                ENV_API_KEY_SECRET_ARN: self.api_key.secret_arn,
                ENV_SIGNING_KEY_SECRET_ARN: self.signing_key.secret_arn,
                ENV_EVENTS_QUEUE_URL: self.events_queue.queue_url,
            },
            dead_letter_queues={"MailgunEventsDlq": self.events_dlq},
            event_queues={"MailgunEvents": self.events_queue},
            # The operator puts Mailgun's values into these after deploy.
            outputs={
                "MailgunApiKeySecretArn": self.api_key.secret_arn,
                "MailgunWebhookSigningKeySecretArn": self.signing_key.secret_arn,
            },
            webhook=Webhook(
                NAME,
                names.webhook_path(NAME),
                "Mailgun's HMAC-SHA256 signature over timestamp and token, verified in its intake Lambda, "
                "stale or replayed tokens refused (403); the route has its own stage throttle and the Lambda "
                "refuses bodies over 64 KiB (413).",
                "MailgunWebhookUrl",
                self.events_queue,
                (self.signing_key.secret_arn,),
            ),
        )

    def _secret(self, construct_id: str, what: str, removal: cdk.RemovalPolicy) -> secretsmanager.Secret:
        secret = secretsmanager.Secret(
            self,
            construct_id,
            description=f"sendledger: {what}; replace the generated placeholder with Mailgun's value",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=32, exclude_punctuation=True, include_space=False
            ),
            removal_policy=removal,
        )
        nag.acknowledge(secret, "AwsSolutions-SMG4", _ROTATION)
        nag.acknowledge_aws_managed_secret_key(secret)
        return secret

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        return []

    def attach(self, poller: SendledgerFunction) -> None:
        return None

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        # Both send with the API key; the webhook's intake alone verifies and queues (infra/webhooks.py).
        for function in (api, poller):
            function.role.add_to_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.api_key.secret_arn])
            )
        poller.role.add_to_policy(
            iam.PolicyStatement(actions=list(c.EVENT_QUEUE_CONSUME_ACTIONS), resources=[self.events_queue.queue_arn])
        )


CONSTRUCT_ID = "Mailgun"
RESOURCES = MailgunSecrets
