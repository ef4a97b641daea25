"""Mailgun (email_provider=mailgun): its two keys in Secrets Manager and who may read them.

The secrets are created with a generated placeholder; the operator puts Mailgun's API key and
HTTP webhook signing key in after the first deploy (docs/providers.md). The api Lambda sends and verifies
webhooks; the poller resends and reads the Events API: the signing key is the api's alone.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import nag
from infra.lambdas import SendledgerFunction
from sendledger import names

_ROTATION = (
    "Mailgun keys are issued and rotated in Mailgun's control panel, not by an AWS rotation "
    "Lambda; the functions re-read the secret every 5 minutes, so a rotated value is picked up."
)


class MailgunSecrets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, removal: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.api_key = self._secret("ApiKey", "Mailgun API key (Basic auth api:<key>)", removal)
        self.signing_key = self._secret("WebhookSigningKey", "Mailgun HTTP webhook signing key (HMAC-SHA256)", removal)

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
        return secret

    def environment(self) -> dict[str, str]:
        return {
            names.ENV_MAILGUN_API_KEY_SECRET_ARN: self.api_key.secret_arn,
            names.ENV_MAILGUN_SIGNING_KEY_SECRET_ARN: self.signing_key.secret_arn,
        }

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        read = ["secretsmanager:GetSecretValue"]
        api.role.add_to_policy(
            iam.PolicyStatement(actions=read, resources=[self.api_key.secret_arn, self.signing_key.secret_arn])
        )
        poller.role.add_to_policy(iam.PolicyStatement(actions=read, resources=[self.api_key.secret_arn]))
