"""SendGrid: the API key and webhook verification key secrets, the webhook's events queue, and the
grants of the two Lambdas that use them (nothing else may read the secrets)."""

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
from sendledger.providers.sendgrid import NAME
from sendledger.providers.sendgrid.settings import (
    ENV_API_KEY_SECRET_ARN,
    ENV_EVENTS_QUEUE_URL,
    ENV_WEBHOOK_KEY_SECRET_ARN,
)

_PROVIDER_ISSUED = (
    "Issued by SendGrid, not generated here: it is rotated in SendGrid (a new API key or a re-enabled "
    "signed webhook) and the new value put into this secret; Secrets Manager cannot rotate it."
)


class SendGridResources(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        removal = settings.removal_policy
        # Created with a random placeholder; the operator puts the real values (see README, Deploy).
        self.api_key = secretsmanager.Secret(
            self,
            "ApiKey",
            description="sendledger: SendGrid API key (Mail Send; Email Activity read when enabled)",
            removal_policy=removal,
        )
        self.webhook_key = secretsmanager.Secret(
            self,
            "WebhookPublicKey",
            description="sendledger: SendGrid Signed Event Webhook verification key (base64 DER, as SendGrid shows it)",
            removal_policy=removal,
        )
        for secret in (self.api_key, self.webhook_key):
            nag.acknowledge(secret, "AwsSolutions-SMG4", _PROVIDER_ISSUED)
            nag.acknowledge_aws_managed_secret_key(secret)
        # Verified webhook events wait here for the poller, one event per message.
        self.events_queue, self.events_dlq = queue_with_dlq(
            self, "EventsQueue", visibility_timeout=cdk.Duration.seconds(6 * c.POLLER_TIMEOUT_SECONDS)
        )
        only_producers(self.events_dlq)  # filled by the redrive alone; the queue's producer: infra/webhooks.py

        self.built = Built(
            environment={
                ENV_API_KEY_SECRET_ARN: self.api_key.secret_arn,
                ENV_WEBHOOK_KEY_SECRET_ARN: self.webhook_key.secret_arn,
                ENV_EVENTS_QUEUE_URL: self.events_queue.queue_url,
            },
            dead_letter_queues={"SendGridEventsDlq": self.events_dlq},
            event_queues={"SendGridEvents": self.events_queue},
            outputs={
                "SendGridApiKeySecretArn": self.api_key.secret_arn,
                "SendGridWebhookPublicKeySecretArn": self.webhook_key.secret_arn,
            },
            webhook=Webhook(
                NAME,
                names.webhook_path(NAME),
                "SendGrid's ECDSA signature over timestamp and body, verified in its intake Lambda "
                "(403 otherwise); the route has its own stage throttle and the Lambda refuses bodies over 1 MiB.",
                "SendGridWebhookUrl",
                self.events_queue,
                (self.webhook_key.secret_arn,),
            ),
        )

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        return []

    def attach(self, poller: SendledgerFunction) -> None:
        return None

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        self.grant_api(api.role)
        self.grant_poller(poller.role)

    def grant_api(self, role: iam.IRole) -> None:
        """The api sends mail (API key); the webhook's intake function verifies and queues (infra/webhooks.py)."""
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.api_key.secret_arn])
        )

    def grant_poller(self, role: iam.IRole) -> None:
        """The poller drains the events queue and sends (resends, fallbacks, resets, lookups) with the API key."""
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.api_key.secret_arn])
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(c.EVENT_QUEUE_CONSUME_ACTIONS), resources=[self.events_queue.queue_arn])
        )


CONSTRUCT_ID = "SendGrid"
RESOURCES = SendGridResources
