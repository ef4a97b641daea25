"""A provider's webhook intake: the one route without IAM, in a function of its own per provider.

Its role may verify a POST (the provider's signing key), claim the POST's single-use token (the
provider's own replay-token items, by dynamodb:LeadingKeys) and queue the events on the
provider's queue, of which it is the only producer (infra/queues.py only_producers). A bug in a
webhook parser then reaches neither the ledger's other items nor another provider's queue, and
the IAM-authenticated api holds no write on any provider's events queue.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.data import LedgerData
from infra.lambdas import SYNCHRONOUS, SendledgerFunction
from infra.providers import Webhook
from infra.queues import only_producers
from infra.settings import Settings
from sendledger import names
from sendledger.domain.provider import source_of

WEBHOOK_TIMEOUT_SECONDS = 10  # a provider retries a slow answer; verification and one SQS batch take far less
# The replay guard's items (adapters/dynamodb/webhook_tokens.py token_pk): WHTOKEN#<source>#<token hash>.
TOKEN_ITEM_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem")


def token_key_pattern(provider: str) -> str:
    return f"WHTOKEN#{source_of(provider)}#*"


class WebhookIntake(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        webhook: Webhook,
        settings: Settings,
        data: LedgerData,
        code: lambda_.Code,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        self.webhook = webhook
        self.handler = SendledgerFunction(
            self,
            f"{construct_id}Function",  # the alarms name a function by this id
            description=f"{webhook.provider} signed webhook: verify, claim its token, queue its events",
            handler=names.WEBHOOKS_HANDLER,
            code=code,
            environment=environment,
            timeout=cdk.Duration.seconds(WEBHOOK_TIMEOUT_SECONDS),
            memory_size=256,
            log_retention=settings.log_retention,
            removal_policy=settings.removal_policy,
            statements=[
                iam.PolicyStatement(
                    actions=list(TOKEN_ITEM_ACTIONS),
                    resources=[data.table.table_arn],
                    conditions={
                        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [token_key_pattern(webhook.provider)]}
                    },
                ),
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=list(webhook.secret_arns)),
            ],
            no_dead_letter_reason=SYNCHRONOUS + " The provider retries a POST that failed.",
        )
        # Verified events come from this function alone: not the api, not an operator's role.
        only_producers(webhook.queue, roles=[self.handler.role])

    @property
    def function(self) -> lambda_.Function:
        return self.handler.function
