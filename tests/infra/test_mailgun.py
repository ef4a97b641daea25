"""email_provider=mailgun: the webhook route without IAM but throttled, the secrets, who reads them."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Template

from sendledger import names
from sendledger.providers.mailgun.settings import ENV_API_KEY_SECRET_ARN as MAILGUN_API_KEY_SECRET_ARN_VAR
from sendledger.providers.mailgun.settings import ENV_EVENTS_FINAL_AFTER_SECONDS as MAILGUN_FINAL_AFTER_VAR
from sendledger.providers.mailgun.settings import ENV_SIGNING_KEY_SECRET_ARN as MAILGUN_SIGNING_KEY_VAR
from tests.infra.conftest import default_template, resources, synth

ROUTE = "/v1/providers/mailgun/events"


@pytest.fixture(scope="module")
def mailgun() -> Template:
    return synth(email_provider="mailgun", suppression_lag_slo_seconds=2000)  # Mailgun: final after 1800 s


@pytest.fixture(scope="module")
def ses() -> Template:
    return default_template()


def _webhook_methods(template: Template) -> dict[str, Any]:
    """The webhook routes (their paths end in /events), by logical id."""
    return {
        logical: route
        for logical, route in resources(template, "AWS::ApiGatewayV2::Route").items()
        if route["Properties"]["RouteKey"].endswith("/events")
    }


def test_the_webhook_route_has_no_iam_but_its_own_stage_throttle(mailgun: Template) -> None:
    [route] = _webhook_methods(mailgun).values()
    assert route["Properties"]["AuthorizationType"] == "NONE"
    assert route["Properties"]["RouteKey"] == f"POST {ROUTE}"
    others = resources(mailgun, "AWS::ApiGatewayV2::Route").values()
    assert sum(r["Properties"]["AuthorizationType"] == "NONE" for r in others) == 1  # every other one is IAM
    [stage] = resources(mailgun, "AWS::ApiGatewayV2::Stage").values()
    assert stage["Properties"]["RouteSettings"] == {
        f"POST {ROUTE}": {"ThrottlingRateLimit": 20, "ThrottlingBurstLimit": 40}
    }


def test_ses_deployments_have_no_unauthenticated_route_and_no_mailgun_secrets(ses: Template) -> None:
    assert _webhook_methods(ses) == {}
    assert len(resources(ses, "AWS::SecretsManager::Secret")) == 1  # the fingerprint key only


def _policy_of(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    [policy] = [p for logical, p in resources(template, "AWS::IAM::Policy").items() if logical.startswith(role_prefix)]
    statements: list[dict[str, Any]] = policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def _secrets_read(template: Template, role_prefix: str) -> set[str]:
    read: set[str] = set()
    for statement in _policy_of(template, role_prefix):
        if statement["Action"] == "secretsmanager:GetSecretValue":
            targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            read |= {target["Ref"] for target in targets}
    return read


def test_each_function_reads_only_the_keys_it_needs(mailgun: Template) -> None:
    secrets = {logical for logical in resources(mailgun, "AWS::SecretsManager::Secret")}
    api_key = next(s for s in secrets if s.startswith("MailgunApiKey"))
    signing = next(s for s in secrets if s.startswith("MailgunWebhookSigningKey"))
    fingerprint = next(s for s in secrets if s.startswith("RecipientFingerprintKey"))
    assert _secrets_read(mailgun, "ApiApiFunctionRole") == {api_key, fingerprint}  # no signing key
    assert _secrets_read(mailgun, "IngestionPollerFunctionRole") == {api_key, fingerprint}
    assert _secrets_read(mailgun, "MailgunWebhookMailgunWebhookFunctionRole") == {signing}  # nor recipients' key
    assert _secrets_read(mailgun, "SnsSmsDeliveryLogsFunctionRole") == {fingerprint}


def test_the_lambdas_get_the_secret_arns_never_the_keys(mailgun: Template) -> None:
    ours = [
        f for f in resources(mailgun, "AWS::Lambda::Function").values() if "Environment" in f["Properties"]
    ]  # CDK's own custom-resource provider has none
    # api, poller, sms_delivery_logs, the webhook's intake, the status publisher and the callbacks (same environment)
    assert len(ours) == 6
    for function in ours:
        env = function["Properties"]["Environment"]["Variables"]
        assert env[names.ENV_EMAIL_PROVIDER] == "mailgun"
        assert env[MAILGUN_FINAL_AFTER_VAR] == "1800"
        assert set(env[MAILGUN_API_KEY_SECRET_ARN_VAR]) == {"Ref"}
        assert set(env[MAILGUN_SIGNING_KEY_VAR]) == {"Ref"}


def test_the_secret_arns_are_stack_outputs(mailgun: Template, ses: Template) -> None:
    outputs = mailgun.find_outputs("*")
    assert {"MailgunApiKeySecretArn", "MailgunWebhookSigningKeySecretArn"} <= set(outputs)
    assert not {"MailgunApiKeySecretArn"} & set(ses.find_outputs("*"))


def test_only_the_webhook_intake_queues_onto_the_mailgun_events_queue(mailgun: Template) -> None:
    """The intake queues verified webhook events; the api and the poller send to none of it (test mode
    has its own queue). SES is not enabled: no SES queue."""
    queues = [k for k in resources(mailgun, "AWS::SQS::Queue") if "Dlq" not in k]
    [mailgun_queue] = [k for k in queues if k.startswith("MailgunEventsQueue")]
    granted: dict[str, set[str]] = {}
    for role in ("ApiApiFunctionRole", "IngestionPollerFunctionRole", "MailgunWebhookMailgunWebhookFunctionRole"):
        sent_to = granted[role] = set()
        for statement in _policy_of(mailgun, role):
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if "sqs:SendMessage" in actions:
                targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                sent_to |= {target["Fn::GetAtt"][0] for target in targets}
    assert granted["MailgunWebhookMailgunWebhookFunctionRole"] == {mailgun_queue}
    assert mailgun_queue not in granted["ApiApiFunctionRole"] | granted["IngestionPollerFunctionRole"]
