"""Infrai: its API key in Secrets Manager and who may read it (no webhook, no queue: the poller asks)."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import nag
from infra.lambdas import SendledgerFunction
from infra.providers import Built, Functions
from infra.settings import Settings
from sendledger.providers.infrai.settings import ENV_API_KEY_SECRET_ARN

_PROVIDER_ISSUED = (
    "Issued by Infrai, not generated here: it is rotated in Infrai and the new value put into this "
    "secret; the functions re-read it every 5 minutes, so a rotated key is picked up."
)


class InfraiResources(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        # Created with a random placeholder; the operator puts Infrai's key in (docs/providers.md).
        self.api_key = secretsmanager.Secret(
            self,
            "ApiKey",
            description="sendledger: Infrai API key (Bearer, every module)",
            removal_policy=settings.removal_policy,
        )
        nag.acknowledge(self.api_key, "AwsSolutions-SMG4", _PROVIDER_ISSUED)
        nag.acknowledge_aws_managed_secret_key(self.api_key)
        self.built = Built(
            environment={ENV_API_KEY_SECRET_ARN: self.api_key.secret_arn},
            outputs={"InfraiApiKeySecretArn": self.api_key.secret_arn},
        )

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        return []

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        """Both send (the poller also resends, looks timed-out sends up and asks for statuses)."""
        for function in (api, poller):
            function.role.add_to_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.api_key.secret_arn])
            )

    def attach(self, poller: SendledgerFunction) -> None:
        return None


CONSTRUCT_ID = "Infrai"
RESOURCES = InfraiResources
