"""Per-caller callback secrets: one Secrets Manager secret per caller, `sendledger/<stage>/callbacks/<caller id>`.

The secrets are made at run time, by the admin routes (an admin sets a caller's first callback
URL, or rotates its secret), so the stack creates none: it grants the name prefix. The api may
create, describe, read and write secrets under the prefix and nothing else; the callbacks
Lambda may only read them, and read only the caller items of the ledger (`CALLER#...`).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra import nag
from infra.data import LedgerData
from infra.lambdas import SendledgerFunction
from sendledger import names
from sendledger.adapters.dynamodb.keys import CALLER_PK_PREFIX

ADMIN_SECRET_ACTIONS = (
    "secretsmanager:CreateSecret",  # a caller's first secret
    "secretsmanager:DescribeSecret",
    "secretsmanager:GetSecretValue",  # a rotation keeps the current secret as the previous one
    "secretsmanager:PutSecretValue",
)


class CallerSecrets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, stage: str) -> None:
        super().__init__(scope, construct_id)
        self.prefix = names.CALLBACK_SECRETS_PATH.format(stage=stage)
        # Secrets Manager appends "-" and six random characters to every secret's ARN.
        self.secrets_arn = cdk.Stack.of(self).format_arn(
            service="secretsmanager",
            resource="secret",
            resource_name=f"{self.prefix}*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )

    @property
    def environment(self) -> dict[str, str]:
        return {names.ENV_CALLBACK_SECRET_PREFIX: self.prefix}

    def grant_admin(self, api: SendledgerFunction) -> None:
        """The api's admin routes: make, rotate and read the callers' secrets."""
        api.role.add_to_policy(iam.PolicyStatement(actions=list(ADMIN_SECRET_ACTIONS), resources=[self.secrets_arn]))
        nag.acknowledge_wildcard_resource(
            api.role,
            self.secrets_arn,
            "One secret per caller, made at run time by the admin routes (caller ids are not known at "
            "deploy time): the '*' is the caller id (and the suffix Secrets Manager appends) under this "
            "stage's callback-secret prefix; no other secret matches.",
        )

    def grant_callbacks(self, callbacks: SendledgerFunction, data: LedgerData) -> None:
        """The callbacks Lambda: read a caller's secrets and its settings item, nothing more."""
        callbacks.role.add_to_policy(
            iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.secrets_arn])
        )
        callbacks.role.add_to_policy(
            iam.PolicyStatement(
                actions=["dynamodb:GetItem"],
                resources=[data.table.table_arn],
                conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{CALLER_PK_PREFIX}*"]}},
            )
        )
        nag.acknowledge_wildcard_resource(
            callbacks.role,
            self.secrets_arn,
            "Reads the secret of the caller that owns each event (one per caller, made at run time by the "
            "admin routes): the '*' is the caller id under this stage's callback-secret prefix.",
        )
