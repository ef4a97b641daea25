"""CDK with email_provider=sendgrid: an unauthenticated, throttled webhook route; secrets only its users read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from tests.infra.conftest import resources, synth

WEBHOOK = "/v1/providers/sendgrid/events"


@pytest.fixture(scope="module")
def template() -> Template:
    return synth(email_provider="sendgrid")


def policies_granting(template: Template, action: str) -> dict[str, list[Any]]:
    """Policy logical id → the resources it grants `action` on."""
    found: dict[str, list[Any]] = {}
    for logical_id, policy in resources(template, "AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if action in actions:
                targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                found.setdefault(logical_id, []).extend(targets)
    return found


def test_only_the_webhook_route_skips_iam_and_it_has_its_own_throttle(template: Template) -> None:
    routes = resources(template, "AWS::ApiGatewayV2::Route").values()
    open_routes = [r for r in routes if r["Properties"]["AuthorizationType"] == "NONE"]
    assert [r["Properties"]["RouteKey"] for r in open_routes] == [f"POST {WEBHOOK}"]
    assert all(r["Properties"]["AuthorizationType"] == "AWS_IAM" for r in routes if r not in open_routes)
    [stage] = resources(template, "AWS::ApiGatewayV2::Stage").values()
    throttle = stage["Properties"]["RouteSettings"][f"POST {WEBHOOK}"]
    assert (throttle["ThrottlingRateLimit"], throttle["ThrottlingBurstLimit"]) == (20, 40)


def test_the_api_key_is_read_by_the_api_and_the_poller_the_webhook_key_by_the_intake_alone(template: Template) -> None:
    secrets = resources(template, "AWS::SecretsManager::Secret")
    api_key = next(k for k, v in secrets.items() if "API key" in v["Properties"]["Description"])
    webhook_key = next(k for k, v in secrets.items() if "Webhook" in v["Properties"]["Description"])
    readers = policies_granting(template, "secretsmanager:GetSecretValue")
    reading_api_key = {p for p, targets in readers.items() if {"Ref": api_key} in targets}
    reading_webhook_key = {p for p, targets in readers.items() if {"Ref": webhook_key} in targets}
    assert len(reading_api_key) == 2 and all("Api" in p or "Poller" in p for p in reading_api_key)
    assert len(reading_webhook_key) == 1 and all("SendgridWebhook" in p for p in reading_webhook_key)


def test_no_ses_send_rights_when_sendgrid_sends(template: Template) -> None:
    assert policies_granting(template, "ses:SendEmail") == {}
    functions = resources(template, "AWS::Lambda::Function").values()
    environments = [f["Properties"].get("Environment", {}).get("Variables", {}) for f in functions]
    sendledger = [env for env in environments if "EMAIL_PROVIDER" in env]
    assert sendledger and all(env["EMAIL_PROVIDER"] == "sendgrid" for env in sendledger)
    assert all("SENDGRID_EVENTS_QUEUE_URL" in env for env in sendledger)
    assert "SG." not in json.dumps(template.to_json())


def test_only_the_webhook_intake_may_queue_onto_the_sendgrid_events_queue(template: Template) -> None:
    """The intake queues verified webhook events; test mode has a queue of its own. Nothing else may."""
    [queue] = [k for k in resources(template, "AWS::SQS::Queue") if k.startswith("SendGrid") and "Dlq" not in k]
    senders = {
        p
        for p, targets in policies_granting(template, "sqs:SendMessage").items()
        if {"Fn::GetAtt": [queue, "Arn"]} in targets
    }
    assert len(senders) == 1 and all(p.startswith("SendgridWebhook") for p in senders), senders
