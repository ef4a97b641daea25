"""`/v1/admin/*` twice: the API's resource policy refuses it to all but the admin principals, and
the api Lambda gets the same list (it checks again, so a broad IAM grant is not enough)."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Template

from sendledger import names
from tests.infra.conftest import resources, synth

ACCOUNT = "123456789012"
ADMINS = f"arn:aws:iam::{ACCOUNT}:role/service-role/ops arn:aws:iam::{ACCOUNT}:user/alice"


@pytest.fixture(scope="module")
def template() -> Template:
    return synth(admin_principals=ADMINS)


def resource_policy(template: Template) -> list[dict[str, Any]]:
    [api] = resources(template, "AWS::ApiGateway::RestApi").values()
    statements: list[dict[str, Any]] = api["Properties"]["Policy"]["Statement"]
    return statements


def test_admin_routes_are_denied_to_every_principal_but_the_admins(template: Template) -> None:
    [deny] = resource_policy(template)
    assert (deny["Effect"], deny["Principal"], deny["Action"]) == ("Deny", {"AWS": "*"}, "execute-api:Invoke")
    assert deny["Resource"] == "execute-api:/*/*/v1/admin/*"
    # aws:PrincipalArn of a role session is the role's ARN with its path: any path, this name
    assert deny["Condition"] == {
        "ArnNotLike": {
            "aws:PrincipalArn": [
                f"arn:aws:iam::{ACCOUNT}:role/ops",
                f"arn:aws:iam::{ACCOUNT}:role/*/ops",
                f"arn:aws:iam::{ACCOUNT}:user/alice",
                f"arn:aws:iam::{ACCOUNT}:user/*/alice",
            ]
        }
    }


def test_the_api_lambda_checks_the_same_principals(template: Template) -> None:
    [api_function] = [
        fn
        for fn in resources(template, "AWS::Lambda::Function").values()
        if fn["Properties"].get("Handler") == names.API_HANDLER
    ]
    env = api_function["Properties"]["Environment"]["Variables"]
    assert env[names.ENV_ADMIN_PRINCIPALS].split() == [
        f"arn:aws:iam::{ACCOUNT}:role/ops",
        f"arn:aws:iam::{ACCOUNT}:user/alice",
    ]
