"""Every queue accepts only its producer; each role holds only what its function does (issue #34).

Read from the synthesized template: the default deployment (SES, SNS) and one with SendGrid and
Mailgun enabled beside SES, whose webhooks each run in a function of their own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.queues import PRODUCERS_ONLY_SID
from tests.infra.conftest import default_template, resources, synth

# Each queue (by logical-id prefix) -> who may send to it: roles by aws:PrincipalArn, services by
# the resource they send for (aws:SourceArn). () and (): nobody (a redrive fills it).
PRODUCERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "MessagingEscalationQueueDlq": ((), ()),
    "MessagingEscalationQueue": (("IngestionPollerFunctionRole",), ()),
    "MessagingTestOutcomesQueueDlq": ((), ()),
    "MessagingTestOutcomesQueue": (("ApiApiFunctionRole", "IngestionPollerFunctionRole"), ()),
    "SesSesEventsQueueDlq": ((), ()),
    "SesSesEventsSubscriptionDlq": ((), ("SesSesEventsTopic",)),  # what SNS could not deliver
    "SesSesEventsQueue": ((), ("SesSesEventsTopic",)),
    "SendGridEventsQueueDlq": ((), ()),
    "SendGridEventsQueue": (("SendgridWebhookSendgridWebhookFunctionRole",), ()),
    "MailgunEventsQueueDlq": ((), ()),
    "MailgunEventsQueue": (("MailgunWebhookMailgunWebhookFunctionRole",), ()),
    "SnsSmsDeliveryLogsDlq": (("SnsSmsDeliveryLogsFunctionRole",), ()),
    "IngestionPollerDlq": (("IngestionPollerFunctionRole",), ("IngestionPollSchedule",)),
    "StatusOutPublisherDlq": (("StatusOutPublisherFunctionRole",), ()),
    # A callback retry or a spent record is queued by the callbacks function itself.
    "StatusOutCallbackQueueDlq": (("StatusOutCallbacksFunctionRole",), ("StatusOutCallbackRule",)),
    "StatusOutCallbackQueue": (("StatusOutCallbacksFunctionRole",), ("StatusOutCallbackRule",)),
}


@pytest.fixture(scope="module")
def default() -> Template:
    return default_template()


@pytest.fixture(scope="module")
def webhooks() -> Template:
    # Mailgun's Events API is final after 1800 s: the SLO must allow it for synthesis to accept it.
    return synth(email_providers="sendgrid,mailgun", suppression_lag_slo_seconds=2000)


def _queue_policies(template: Template) -> dict[str, list[dict[str, Any]]]:
    """Queue logical id -> the statements of every policy attached to it."""
    found: dict[str, list[dict[str, Any]]] = {}
    for policy in resources(template, "AWS::SQS::QueuePolicy").values():
        for queue in policy["Properties"]["Queues"]:
            found.setdefault(queue["Ref"], []).extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def _expected(logical_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # The longest prefix wins: "...QueueDlq" before "...Queue".
    matches = [prefix for prefix in PRODUCERS if logical_id.startswith(prefix)]
    assert matches, f"{logical_id}: a queue nobody decided the producers of"
    return PRODUCERS[max(matches, key=len)]


def _logical_ids(values: list[Any]) -> tuple[str, ...]:
    """The resources a condition names ({"Fn::GetAtt": [id, "Arn"]} or {"Ref": id}), in order."""
    return tuple(value["Fn::GetAtt"][0] if "Fn::GetAtt" in value else value["Ref"] for value in values)


def _strip_hash(logical_id: str, prefixes: tuple[str, ...]) -> str:
    return next((prefix for prefix in prefixes if logical_id.startswith(prefix)), logical_id)


@pytest.mark.parametrize("which", ["default", "webhooks"])
def test_every_queue_denies_send_message_to_all_but_its_producers(which: str, request: pytest.FixtureRequest) -> None:
    template: Template = request.getfixturevalue(which)
    policies = _queue_policies(template)
    queues = list(resources(template, "AWS::SQS::Queue"))
    assert len(queues) >= 10
    for queue in queues:
        roles, sources = _expected(queue)
        denies = [s for s in policies.get(queue, []) if s.get("Sid") == PRODUCERS_ONLY_SID]
        assert len(denies) == 1, f"{queue}: no producers-only policy"
        [deny] = denies
        assert deny["Effect"] == "Deny" and deny["Principal"] == {"AWS": "*"}, queue
        assert deny["Action"] == "sqs:SendMessage" and deny["Resource"] == {"Fn::GetAtt": [queue, "Arn"]}, queue
        condition = deny.get("Condition", {}).get("ArnNotEquals", {})
        assert set(deny.get("Condition", {})) <= {"ArnNotEquals"}, queue  # nothing that could widen it
        named_roles = _logical_ids(condition.get("aws:PrincipalArn", []))
        named_sources = _logical_ids(condition.get("aws:SourceArn", []))
        assert tuple(_strip_hash(r, roles) for r in named_roles) == roles, queue
        assert tuple(_strip_hash(s, sources) for s in named_sources) == sources, queue


def test_the_ses_topic_may_still_deliver_to_its_queue(default: Template) -> None:
    """The deny leaves SNS's own allow (the subscription's) in force for the topic alone."""
    [queue] = [q for q in resources(default, "AWS::SQS::Queue") if q.startswith("SesSesEventsQueue") and "Dlq" not in q]
    allows = [s for s in _queue_policies(default)[queue] if s["Effect"] == "Allow"]
    assert any(
        s["Principal"] == {"Service": "sns.amazonaws.com"}
        and s["Condition"]["ArnEquals"]["aws:SourceArn"]["Ref"].startswith("SesSesEventsTopic")
        for s in allows
    )


def _role_statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    [role] = [r for r in resources(template, "AWS::IAM::Role") if r.startswith(role_prefix)]
    found = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            found.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _targets(template: Template, role_prefix: str, action: str) -> set[str]:
    """The logical ids of what `role_prefix`'s role may `action` ("*" for any resource)."""
    found: set[str] = set()
    for statement in _role_statements(template, role_prefix):
        if statement["Effect"] == "Allow" and action in _as_list(statement["Action"]):
            for resource in _as_list(statement["Resource"]):
                found.add("*" if resource == "*" else _resource_id(resource))
    return found


def _resource_id(resource: Any) -> str:
    text = json.dumps(resource)
    for key in ("Fn::GetAtt", "Ref"):
        if isinstance(resource, dict) and key in resource:
            return resource[key][0] if key == "Fn::GetAtt" else resource[key]
    return text  # a joined ARN (an index, a log group's name)


def _prefixes(ids: set[str]) -> set[str]:
    return {i.rstrip("0123456789ABCDEF") for i in ids}


@pytest.mark.parametrize("which", ["default", "webhooks"])
def test_the_api_writes_no_provider_queue_and_no_delivery_status_log(
    which: str, request: pytest.FixtureRequest
) -> None:
    template: Template = request.getfixturevalue(which)
    # Its one queue: test mode's own; its one log group: its own.
    assert _prefixes(_targets(template, "ApiApiFunctionRole", "sqs:SendMessage")) == {"MessagingTestOutcomesQueue"}
    for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
        assert _prefixes(_targets(template, "ApiApiFunctionRole", action)) == {"ApiApiFunctionLogs"}
    # The poller: escalations and test outcomes, never a provider's queue.
    assert _prefixes(_targets(template, "IngestionPollerFunctionRole", "sqs:SendMessage")) == {
        "MessagingEscalationQueue",
        "MessagingTestOutcomesQueue",
        "IngestionPollerDlq",  # its own failed async invocations (Lambda sends them under its role)
    }
    for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
        assert _prefixes(_targets(template, "IngestionPollerFunctionRole", action)) == {"IngestionPollerFunctionLogs"}


def test_the_api_serves_no_webhook(webhooks: Template) -> None:
    """Each provider's webhook route invokes that provider's intake function, never the api."""
    routes = resources(webhooks, "AWS::ApiGatewayV2::Route")
    integrations = resources(webhooks, "AWS::ApiGatewayV2::Integration")
    unsigned = [r for r in routes.values() if r["Properties"]["AuthorizationType"] == "NONE"]
    assert len(unsigned) == 2
    # Target: integrations/<the integration's Ref>
    targets = [r["Properties"]["Target"]["Fn::Join"][1][1]["Ref"] for r in unsigned]
    invoked = {json.dumps(integrations[target]["Properties"]["IntegrationUri"]) for target in targets}
    assert all("WebhookFunction" in uri and "ApiApiFunction" not in uri for uri in invoked) and len(invoked) == 2


@pytest.mark.parametrize(("provider", "source"), [("Sendgrid", "sendgrid"), ("Mailgun", "mailgun")])
def test_a_webhook_intake_may_only_verify_claim_its_tokens_and_queue_for_its_provider(
    webhooks: Template, provider: str, source: str
) -> None:
    role = f"{provider}Webhook{provider}WebhookFunctionRole"
    statements = [s for s in _role_statements(webhooks, role) if s["Effect"] == "Allow"]
    actions = {action for s in statements for action in _as_list(s["Action"])}
    assert actions == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTelemetryRecords",
        "xray:PutTraceSegments",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "secretsmanager:GetSecretValue",
        "sqs:SendMessage",
    }
    queue_prefix = "SendGridEventsQueue" if provider == "Sendgrid" else "MailgunEventsQueue"
    assert _prefixes(_targets(webhooks, role, "sqs:SendMessage")) == {queue_prefix}
    [secret] = _targets(webhooks, role, "secretsmanager:GetSecretValue")
    assert secret.startswith(("SendGridWebhookPublicKey", "MailgunWebhookSigningKey"))
    [items] = [s for s in statements if "dynamodb:PutItem" in _as_list(s["Action"])]
    assert items["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"WHTOKEN#{source}#*"]}}
    assert _prefixes(_targets(webhooks, role, "logs:PutLogEvents")) == {
        f"{provider}Webhook{provider}WebhookFunctionLogs"
    }


def test_every_log_group_keeps_log_retention_days() -> None:
    template = synth(log_retention_days=400)  # no construct hard-codes 400: each group reads the setting
    groups = resources(template, "AWS::Logs::LogGroup")
    assert len(groups) >= 8
    assert {logical: group["Properties"].get("RetentionInDays") for logical, group in groups.items()} == {
        logical: 400 for logical in groups
    }


def test_every_log_group_is_encrypted_with_the_stacks_key_which_cloudwatch_logs_may_use(default: Template) -> None:
    [key] = resources(default, "AWS::KMS::Key")
    groups = resources(default, "AWS::Logs::LogGroup")
    assert groups and all(g["Properties"].get("KmsKeyId") == {"Fn::GetAtt": [key, "Arn"]} for g in groups.values())
    statements = resources(default, "AWS::KMS::Key")[key]["Properties"]["KeyPolicy"]["Statement"]
    [logs] = [s for s in statements if "logs." in json.dumps(s.get("Principal", {}))]
    assert "kms:EncryptionContext:aws:logs:arn" in logs["Condition"]["ArnLike"]


def test_api_access_logs_carry_no_body_header_or_query(default: Template) -> None:
    """An HTTP API has no execution log: its one log is the access line, which must never carry
    what a request holds (recipients, reset tokens being consumed, histories)."""
    [stage] = resources(default, "AWS::ApiGatewayV2::Stage").values()
    fields = json.loads(stage["Properties"]["AccessLogSettings"]["Format"]).values()
    assert not any(word in value for value in fields for word in ("body", "header", "query", "path."))


@pytest.mark.parametrize("which", ["default", "webhooks"])
def test_no_role_is_granted_a_send_its_queue_denies(which: str, request: pytest.FixtureRequest) -> None:
    """Grants and producer policies agree: a role allowed sqs:SendMessage on one of our queues is
    one of that queue's producers (else the deny would break it deployed, silently under moto)."""
    template: Template = request.getfixturevalue(which)
    policies = _queue_policies(template)
    queues = set(resources(template, "AWS::SQS::Queue"))
    checked = 0
    for policy in resources(template, "AWS::IAM::Policy").values():
        roles = {role["Ref"] for role in policy["Properties"].get("Roles", [])}
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] != "Allow" or "sqs:SendMessage" not in _as_list(statement["Action"]):
                continue
            for resource in _as_list(statement["Resource"]):
                queue = resource.get("Fn::GetAtt", [None])[0] if isinstance(resource, dict) else None
                if queue not in queues:
                    continue
                denies = [s for s in policies.get(queue, []) if s.get("Sid") == PRODUCERS_ONLY_SID]
                for deny in denies:
                    producers = _logical_ids(
                        deny.get("Condition", {}).get("ArnNotEquals", {}).get("aws:PrincipalArn", [])
                    )
                    assert roles <= set(producers), f"{sorted(roles)} may send to {queue} but its policy denies them"
                    checked += 1
    assert checked >= 5
