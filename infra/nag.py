"""cdk-nag v3 acknowledgments: every one names its rule (or exact finding) and a reason."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge `rule_id` (e.g. "AwsSolutions-SQS3") on `scope` and everything below it."""
    cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=rule_id, reason=reason))


def acknowledge_aws_managed_secret_key(secret: IConstruct) -> None:
    """PCI DSS 3.2.1's customer-key rule for a secret, acknowledged with the reason it holds."""
    acknowledge(
        secret,
        "PCI.DSS.321::PCI.DSS.321-SecretsManagerUsingKMSKey",
        "Encrypted with the account's aws/secretsmanager key: GetSecretValue is granted per function on "
        "this secret's ARN alone, which is the access control a customer key's policy would repeat, and "
        "every read is in CloudTrail either way (docs/operations.md, keys).",
    )


def acknowledge_wildcard_resource(scope: IConstruct, resource: str, reason: str) -> None:
    """Acknowledge one AwsSolutions-IAM5 finding: exactly this resource, nothing broader.

    cdk-nag v3 matches the finding id `AwsSolutions-IAM5[Resource::<flattened ARN>]`; the ARN is
    flattened here the same way cdk-nag does, so logical ids need not be hard-coded.
    """
    flat = flatten_cfn_reference(cdk.Stack.of(scope).resolve(resource))
    acknowledge(scope, f"AwsSolutions-IAM5[Resource::{flat}]", reason)


def flatten_cfn_reference(node: Any) -> str:
    """Python port of cdk-nag's utils/flatten-cfn-reference.ts."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if "Fn::Join" in node:
            delimiter, items = node["Fn::Join"]
            return str(delimiter).join(flatten_cfn_reference(i) for i in items)
        if "Fn::Sub" in node:
            return flatten_cfn_reference(node["Fn::Sub"])
        if "Fn::GetAtt" in node:
            resource, attribute = node["Fn::GetAtt"]
            return f"<{flatten_cfn_reference(resource)}.{flatten_cfn_reference(attribute)}>"
        if "Fn::ImportValue" in node:
            return flatten_cfn_reference(node["Fn::ImportValue"])
        if "Ref" in node:
            return f"<{flatten_cfn_reference(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))
