"""CDK with email_provider=sendgrid: an unauthenticated, throttled webhook route; secrets only its users read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from tests.infra.conftest import resources, synth


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
    methods = resources(template, "AWS::ApiGateway::Method")
    open_methods = [m for m in methods.values() if m["Properties"]["AuthorizationType"] == "NONE"]
    assert len(open_methods) == 1 and open_methods[0]["Properties"]["HttpMethod"] == "POST"
    assert all(m["Properties"]["AuthorizationType"] == "AWS_IAM" for m in methods.values() if m not in open_methods)
    [stage] = resources(template, "AWS::ApiGateway::Stage").values()
    settings = {s["ResourcePath"]: s for s in stage["Properties"]["MethodSettings"]}
    webhook = settings["/~1v1~1providers~1sendgrid~1events"]
    assert (webhook["ThrottlingRateLimit"], webhook["ThrottlingBurstLimit"]) == (20, 40)


def test_the_secrets_are_read_by_the_api_and_the_poller_only(template: Template) -> None:
    secrets = resources(template, "AWS::SecretsManager::Secret")
    api_key = next(k for k, v in secrets.items() if "API key" in v["Properties"]["Description"])
    webhook_key = next(k for k, v in secrets.items() if "Webhook" in v["Properties"]["Description"])
    readers = policies_granting(template, "secretsmanager:GetSecretValue")
    reading_api_key = {p for p, targets in readers.items() if {"Ref": api_key} in targets}
    reading_webhook_key = {p for p, targets in readers.items() if {"Ref": webhook_key} in targets}
    assert len(reading_api_key) == 2 and all("Api" in p or "Poller" in p for p in reading_api_key)
    assert len(reading_webhook_key) == 1 and all("Api" in p for p in reading_webhook_key)


def test_no_ses_send_rights_when_sendgrid_sends(template: Template) -> None:
    assert policies_granting(template, "ses:SendEmail") == {}
    functions = resources(template, "AWS::Lambda::Function").values()
    environments = [f["Properties"].get("Environment", {}).get("Variables", {}) for f in functions]
    sendledger = [env for env in environments if "EMAIL_PROVIDER" in env]
    assert sendledger and all(env["EMAIL_PROVIDER"] == "sendgrid" for env in sendledger)
    assert all("SENDGRID_EVENTS_QUEUE_URL" in env for env in sendledger)
    assert "SG." not in json.dumps(template.to_json())


def test_api_and_poller_may_queue_onto_the_sendgrid_events_queue(template: Template) -> None:
    """The api queues verified webhook events; both queue a test caller's simulated SendGrid events
    (the api's sends, the poller's resends and fallbacks). Nothing else may."""
    [queue] = [k for k in resources(template, "AWS::SQS::Queue") if k.startswith("SendGrid") and "Dlq" not in k]
    senders = {
        p
        for p, targets in policies_granting(template, "sqs:SendMessage").items()
        if {"Fn::GetAtt": [queue, "Arn"]} in targets
    }
    assert len(senders) == 2 and all("Api" in p or "Poller" in p for p in senders), senders
