"""checkov (CloudFormation checks on the synthesized template): what is skipped, and why.

Each skip lands in the resource's own `Metadata.checkov.skip` with its reason, as the cdk-nag
acknowledgments do; an Aspect applies them by resource type so a new function or queue gets
the same judgement (and nothing broader than its type).
"""

from __future__ import annotations

import jsii
from aws_cdk import CfnResource, IAspect
from aws_cdk import aws_iam as iam
from constructs import IConstruct

from infra import constants as c

# SMS Publish has no resource ARN, so it is allowed on "*"; this Deny takes every topic out of it.
_TOPIC_ARNS = "arn:aws:sns:*:*:*"

_LAMBDA = [
    (
        "CKV_AWS_117",
        "No VPC resources are reached: DynamoDB, SQS, SES, SNS and EventBridge are public AWS APIs "
        "over TLS with IAM; a VPC would add NAT or endpoint cost and nothing to isolate.",
    ),
    (
        "CKV_AWS_173",
        "The environment holds resource names, ARNs and tunables only; secrets are read from "
        "Secrets Manager at run time, so a CMK for the variables would protect nothing secret.",
    ),
    (
        "CKV_AWS_115",
        "No reserved concurrency: it would carve capacity out of the account pool; concurrency is "
        "bounded where it matters by the event sources (SQS max concurrency, one stream shard each) and the API's "
        "stage throttling.",
    ),
    (
        "CKV_AWS_116",
        "Not invoked asynchronously (API Gateway, DynamoDB Streams, SQS) or already given a DLQ "
        "where it is: a function DLQ only applies to asynchronous invocations; stream and queue failures go to "
        "the event source's on-failure destination or the queue's redrive DLQ.",
    ),
]
SKIPS: dict[str, list[tuple[str, str]]] = {
    "AWS::Lambda::Function": _LAMBDA,
    "AWS::SQS::Queue": [
        (
            "CKV_AWS_27",
            "Encrypted with SQS-managed SSE (SqsManagedSseEnabled: true, set explicitly); this check "
            "only recognizes a KMS key, which the queues' senders (SNS, EventBridge, Lambda) would need grants on.",
        ),
    ],
    "AWS::SecretsManager::Secret": [
        (
            "CKV_AWS_149",
            "Encrypted with the account's aws/secretsmanager key; GetSecretValue is granted per "
            "function on this secret's ARN only, which is the access control a CMK would duplicate.",
        ),
    ],
    "AWS::DynamoDB::Table": [
        (
            "CKV_AWS_119",
            "Encrypted at rest with the AWS managed key; access is per-function IAM on the table "
            "ARN, and the ledger holds token hashes only, never a token.",
        ),
    ],
    "AWS::ApiGateway::Stage": [
        (
            "CKV_AWS_120",
            "No API cache: every answer is per caller and must reflect the ledger as it is now "
            "(a cached message view or idempotent replay would be wrong).",
        ),
    ],
}
# Only the roles that send SMS: an Allow on "*" that the explicit Deny narrows to phone numbers.
ROLE_POLICY_SKIPS = [
    (
        "CKV_AWS_111",
        f"{c.SMS_PUBLISH_ACTION} to a phone number has no resource ARN, so it is allowed on '*'; an "
        f"explicit Deny on {_TOPIC_ARNS} removes every topic from it. The other writes name their resources.",
    ),
]


def sms_only_deny() -> iam.PolicyStatement:
    return iam.PolicyStatement(effect=iam.Effect.DENY, actions=[c.SMS_PUBLISH_ACTION], resources=[_TOPIC_ARNS])


@jsii.implements(IAspect)
class CheckovSkips:
    def visit(self, node: IConstruct) -> None:
        if not isinstance(node, CfnResource):
            return
        skips = list(SKIPS.get(node.cfn_resource_type, []))
        if getattr(node, "dead_letter_config", None) is not None:
            skips = [skip for skip in skips if skip[0] != "CKV_AWS_116"]  # it has one: let the check pass
        if node.cfn_resource_type == "AWS::IAM::Policy" and _denies_topics(node):
            skips += ROLE_POLICY_SKIPS
        if skips:
            existing = node.get_metadata("checkov") or {}
            listed = existing.get("skip", [])
            listed += [{"id": check, "comment": reason} for check, reason in skips]
            node.add_metadata("checkov", {**existing, "skip": listed})


def _denies_topics(policy: CfnResource) -> bool:
    from aws_cdk import Stack

    document = Stack.of(policy).resolve(getattr(policy, "policy_document", None))
    statements = (document or {}).get("Statement", [])
    return any(s.get("Effect") == "Deny" and s.get("Resource") == _TOPIC_ARNS for s in statements)
