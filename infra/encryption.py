"""The stack's one customer-managed KMS key, and every log group the stack owns encrypted with it.

One key for the SNS topics (AWS services cannot publish to topics under aws/sns) and the log
groups (PCI DSS 3.4): $1 a month whatever it protects, plus requests, so a second key would only
add cost. Its policy lets CloudWatch Logs use it for this account's log groups alone.
"""

from __future__ import annotations

import aws_cdk as cdk
import jsii
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

# What CloudWatch Logs needs of a key that encrypts log groups (its documented key policy).
LOGS_KEY_ACTIONS = ("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*")


def stack_key(scope: Construct, construct_id: str, *, removal_policy: cdk.RemovalPolicy) -> kms.Key:
    key = kms.Key(
        scope,
        construct_id,
        description="sendledger: SNS topics (alarms, provider events) and the stack's log groups",
        enable_key_rotation=True,
        removal_policy=removal_policy,
    )
    partition, region, account = cdk.Aws.PARTITION, cdk.Aws.REGION, cdk.Aws.ACCOUNT_ID
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{region}.amazonaws.com")],
            actions=list(LOGS_KEY_ACTIONS),
            resources=["*"],  # in a key policy "*" is this key
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account}:log-group:*"
                }
            },
        )
    )
    return key


@jsii.implements(cdk.IAspect)
class EncryptLogGroups:
    """Every log group in scope (the functions', the API's, the SMS delivery-status groups) under `key`:
    a new log group is encrypted without anyone remembering to."""

    def __init__(self, key: kms.IKey) -> None:
        self.key = key

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, logs.CfnLogGroup) and node.kms_key_id is None:
            node.kms_key_id = self.key.key_arn
