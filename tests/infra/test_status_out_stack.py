"""The status-out resources in the synthesized template."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from sendledger.adapters.callback_queue import CALL_SECONDS
from tests.infra.conftest import default_template, resources, synth


@pytest.fixture(scope="module")
def with_callbacks() -> Template:
    """Callbacks are always deployed: each caller's URL is a caller setting, not a synth-time one."""
    return default_template()


def test_the_publisher_reads_the_stream_with_partial_failures_bisection_and_a_dlq(with_callbacks: Template) -> None:
    with_callbacks.has_resource_properties(
        "AWS::DynamoDB::Table", {"StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"}}
    )
    with_callbacks.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "StartingPosition": "TRIM_HORIZON",
            "BisectBatchOnFunctionError": True,
            "MaximumRetryAttempts": 10,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "DestinationConfig": {"OnFailure": {"Destination": Match.any_value()}},
        },
    )
    with_callbacks.has_resource_properties("AWS::Events::EventBus", {"Name": "sendledger-dev"})


def test_callbacks_have_a_rule_a_queue_with_redrive_and_no_deployment_wide_secret(with_callbacks: Template) -> None:
    with_callbacks.has_resource_properties(
        "AWS::Events::Rule", {"EventPattern": {"source": ["sendledger"]}, "EventBusName": Match.any_value()}
    )
    with_callbacks.has_resource_properties(
        "AWS::SQS::Queue", {"RedrivePolicy": {"maxReceiveCount": 6, "deadLetterTargetArn": Match.any_value()}}
    )
    # The fingerprint key only: each caller's callback secret is made by the admin routes
    with_callbacks.resource_count_is("AWS::SecretsManager::Secret", 1)
    with_callbacks.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "IteratorAge", "Namespace": "AWS/Lambda"}
    )


# --- who may put events on the bus ---------------------------------------------------------------
ACCOUNT = "123456789012"


def _arn_of(value: Any) -> str:
    """A template value as the ARN it resolves to (a role's or the bus's GetAtt, or a literal)."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        logical, _ = value["Fn::GetAtt"]
        return f"arn:aws:iam::{ACCOUNT}:role/{logical}" if "Role" in logical else f"arn:aws:events:::{logical}"
    return str(value)


def _condition_holds(operator: str, key_values: dict[str, Any], request: dict[str, str]) -> bool:
    """IAM's rules for the operators the policies may use (several keys under one operator: all
    must hold); any other operator is a test to extend."""
    return all(_key_holds(operator, key, wanted, request) for key, wanted in key_values.items())


def _key_holds(operator: str, key: str, wanted: Any, request: dict[str, str]) -> bool:
    wanted_arns = {_arn_of(v) for v in (wanted if isinstance(wanted, list) else [wanted])}
    given = request.get(key)
    if operator == "ArnNotEquals":
        return given is None or given not in wanted_arns  # a negated operator holds when the key is absent
    if operator == "ArnEquals":
        return given is not None and given in wanted_arns
    raise AssertionError(f"the policy uses {operator}: teach this test how IAM evaluates it")


def _denied_by_bus_policy(template: Template, principal_arn: str) -> bool:
    """Whether an explicit Deny of the bus's resource policy matches PutEvents by this principal."""
    [(bus, resource)] = resources(template, "AWS::Events::EventBus").items()
    assert not resources(template, "AWS::Events::EventBusPolicy"), "the whole policy is the bus's Policy"
    for statement in resource["Properties"]["Policy"]["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        if statement["Effect"] != "Deny" or not ({"events:PutEvents", "events:*"} & set(actions)):
            continue
        assert json.dumps(statement["Resource"]).endswith(':event-bus/sendledger-dev"]]}'), statement["Resource"]
        assert statement["Principal"] in ("*", {"AWS": "*"}), statement["Principal"]
        request = {"aws:PrincipalArn": principal_arn}
        if all(
            _condition_holds(op, {key: value}, request)
            for op, pairs in statement.get("Condition", {}).items()
            for key, value in pairs.items()
        ):
            return True
    return False


def _role_of(template: Template, function_id: str) -> str:
    [role] = [name for name in resources(template, "AWS::IAM::Role") if name.startswith(function_id)]
    return f"arn:aws:iam::{ACCOUNT}:role/{role}"


def test_a_forged_put_events_from_any_other_principal_is_refused_by_the_bus_policy(with_callbacks: Template) -> None:
    publisher = _role_of(with_callbacks, "StatusOutPublisherFunctionRole")
    forgers = [
        _role_of(with_callbacks, "ApiApiFunctionRole"),  # an app of this account with events:PutEvents on *
        _role_of(with_callbacks, "StatusOutCallbacksFunctionRole"),
        f"arn:aws:iam::{ACCOUNT}:user/developer",
        "arn:aws:iam::210987654321:root",  # another account
    ]
    for forger in forgers:
        assert _denied_by_bus_policy(with_callbacks, forger), forger
    # The publisher alone is not denied; its identity policy allows PutEvents on this bus only
    assert not _denied_by_bus_policy(with_callbacks, publisher)
    [bus] = resources(with_callbacks, "AWS::Events::EventBus")
    with_callbacks.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "Roles": [{"Ref": publisher.rsplit("/", 1)[1]}],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Action": "events:PutEvents", "Resource": {"Fn::GetAtt": [bus, "Arn"]}})]
                )
            },
        },
    )


# --- who may queue a callback ----------------------------------------------------------------------
def _callback_queues(template: Template) -> tuple[str, str]:
    """The callback queue's and its DLQ's logical ids."""
    names = [name for name in resources(template, "AWS::SQS::Queue") if name.startswith("StatusOutCallbackQueue")]
    [dlq] = [name for name in names if name.startswith("StatusOutCallbackQueueDlq")]
    [queue] = [name for name in names if name != dlq]
    return queue, dlq


def _send_denied(template: Template, queue: str, request: dict[str, str]) -> bool:
    """Whether an explicit Deny of the queue's resource policy matches SendMessage by this request."""
    policies = [
        p for p in resources(template, "AWS::SQS::QueuePolicy").values() if {"Ref": queue} in p["Properties"]["Queues"]
    ]
    assert policies, f"{queue} has no resource policy"
    for policy in policies:
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if statement["Effect"] != "Deny" or not ({"sqs:SendMessage", "sqs:*"} & set(actions)):
                continue
            if statement.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false":
                continue  # the TLS-only statement: these requests all use TLS
            assert statement["Resource"] == {"Fn::GetAtt": [queue, "Arn"]}, statement["Resource"]
            assert statement["Principal"] in ("*", {"AWS": "*"}), statement["Principal"]
            if all(_condition_holds(op, pairs, request) for op, pairs in statement.get("Condition", {}).items()):
                return True
    return False


@pytest.mark.parametrize("which", [0, 1], ids=["queue", "dlq"])
def test_a_forged_callback_from_any_principal_but_the_rule_and_the_callbacks_is_refused_by_the_queue(
    with_callbacks: Template, which: int
) -> None:
    # The review's forgery: an operator's or developer's principal with sqs:SendMessage on the queue
    queue = _callback_queues(with_callbacks)[which]
    [rule] = [
        name for name in resources(with_callbacks, "AWS::Events::Rule") if name.startswith("StatusOutCallbackRule")
    ]
    callbacks = _role_of(with_callbacks, "StatusOutCallbacksFunctionRole")
    forgers = [
        {"aws:PrincipalArn": _role_of(with_callbacks, "ApiApiFunctionRole")},
        {"aws:PrincipalArn": _role_of(with_callbacks, "StatusOutPublisherFunctionRole")},
        {"aws:PrincipalArn": f"arn:aws:iam::{ACCOUNT}:user/developer"},
        {"aws:PrincipalArn": f"arn:aws:iam::{ACCOUNT}:role/operator"},
        {"aws:PrincipalArn": "arn:aws:iam::210987654321:root"},  # another account
        # another rule of this account (any bus), delivering through the same service
        {"aws:SourceArn": f"arn:aws:events:us-east-1:{ACCOUNT}:rule/sendledger-dev/mine"},
    ]
    for forger in forgers:
        assert _send_denied(with_callbacks, queue, forger), forger
    # Its producers are not denied: the rule (EventBridge, the rule as its source) and the callbacks
    assert not _send_denied(with_callbacks, queue, {"aws:SourceArn": _arn_of({"Fn::GetAtt": [rule, "Arn"]})})
    assert not _send_denied(with_callbacks, queue, {"aws:PrincipalArn": callbacks})


def test_the_callbacks_may_queue_only_to_their_own_queues(with_callbacks: Template) -> None:
    queue, dlq = _callback_queues(with_callbacks)
    sends = [
        s for s in _statements(with_callbacks, "StatusOutCallbacksFunctionRole") if "sqs:SendMessage" in json.dumps(s)
    ]
    assert [s["Resource"] for s in sends] == [[{"Fn::GetAtt": [queue, "Arn"]}, {"Fn::GetAtt": [dlq, "Arn"]}]]


def test_the_callback_rule_takes_only_this_accounts_sendledger_events(with_callbacks: Template) -> None:
    with_callbacks.has_resource_properties(
        "AWS::Events::Rule",
        {"EventPattern": {"source": ["sendledger"], "account": [{"Ref": "AWS::AccountId"}]}},
    )


@pytest.mark.parametrize("timeout", [10, 60])  # the default, and the longest CALLBACK_TIMEOUT_SECONDS allowed
def test_a_full_batch_of_posts_that_each_time_out_fits_the_callbacks_timeout(
    timeout: int, with_callbacks: Template
) -> None:
    template = with_callbacks if timeout == 10 else synth(callback_timeout_seconds=timeout)
    [function] = [
        f for n, f in resources(template, "AWS::Lambda::Function").items() if n.startswith("StatusOutCallbacks")
    ]
    [mapping] = [
        m["Properties"]
        for n, m in resources(template, "AWS::Lambda::EventSourceMapping").items()
        if n.startswith("StatusOutCallbacks")
    ]
    [queue] = [
        q["Properties"]
        for n, q in resources(template, "AWS::SQS::Queue").items()
        if n.startswith("StatusOutCallbackQueue") and "Dlq" not in n
    ]
    properties = function["Properties"]
    assert properties["Environment"]["Variables"]["CALLBACK_TIMEOUT_SECONDS"] == str(timeout)
    # Every record may wait its whole POST timeout, then change its visibility (3 s at most),
    # and the invocation still ends on its own with time left for its start
    per_record = timeout + CALL_SECONDS
    assert mapping["BatchSize"] * per_record + 10 <= properties["Timeout"] <= 900
    # The queue hides a record in flight for at least six function timeouts (AWS's advice)
    assert queue["VisibilityTimeout"] >= 6 * properties["Timeout"]


# --- per-caller secrets and settings ----------------------------------------------------------------
PREFIX_ARN = {
    "Fn::Join": [
        "",
        [
            "arn:",
            {"Ref": "AWS::Partition"},
            ":secretsmanager:",
            {"Ref": "AWS::Region"},
            ":",
            {"Ref": "AWS::AccountId"},
            ":secret:sendledger/dev/callbacks/*",
        ],
    ]
}


def _statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    [role] = [name for name in resources(template, "AWS::IAM::Role") if name.startswith(role_prefix)]
    return [
        statement
        for policy in resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _secret_statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    return [s for s in _statements(template, role_prefix) if "secretsmanager" in json.dumps(s["Action"])]


def test_the_api_makes_and_rotates_secrets_under_the_stages_prefix_only(with_callbacks: Template) -> None:
    granted = [s for s in _secret_statements(with_callbacks, "ApiApiFunctionRole") if s["Resource"] == PREFIX_ARN]
    assert [sorted(s["Action"]) for s in granted] == [
        [
            "secretsmanager:CreateSecret",
            "secretsmanager:DescribeSecret",
            "secretsmanager:GetSecretValue",
            "secretsmanager:PutSecretValue",
        ]
    ]
    others = [s for s in _secret_statements(with_callbacks, "ApiApiFunctionRole") if s["Resource"] != PREFIX_ARN]
    assert all(s["Action"] == "secretsmanager:GetSecretValue" and "Ref" in s["Resource"] for s in others)  # the key


def test_the_callbacks_read_secrets_under_the_prefix_and_only_caller_items(with_callbacks: Template) -> None:
    secrets = _secret_statements(with_callbacks, "StatusOutCallbacksFunctionRole")
    assert secrets == [{"Action": "secretsmanager:GetSecretValue", "Effect": "Allow", "Resource": PREFIX_ARN}]
    dynamodb = [s for s in _statements(with_callbacks, "StatusOutCallbacksFunctionRole") if "dynamodb" in json.dumps(s)]
    assert [(s["Action"], s["Condition"]) for s in dynamodb] == [
        ("dynamodb:GetItem", {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["CALLER#*"]}})
    ]


def test_no_function_may_post_to_loopback_and_every_one_knows_the_secret_prefix(with_callbacks: Template) -> None:
    for name, function in resources(with_callbacks, "AWS::Lambda::Function").items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        assert "CALLBACK_ALLOW_LOOPBACK" not in variables, name  # the local stack's allowance only
        assert "CALLBACK_URL" not in variables and "CALLBACK_SECRET" not in variables, name
        if name.startswith(("ApiApiFunction", "StatusOutCallbacks")):
            assert variables["CALLBACK_SECRET_PREFIX"] == "sendledger/dev/callbacks/", name


def test_the_publisher_writes_only_message_receipt_and_caller_items_and_only_by_update(
    with_callbacks: Template,
) -> None:
    written = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    statements = _statements(with_callbacks, "StatusOutPublisherFunctionRole")
    writes = [s for s in statements if written & set(s["Action"] if isinstance(s["Action"], list) else [s["Action"]])]
    # An `allow` send's eligibility label, appended to the message item, an accepted SMS's
    # receipt (PMID#), and a caller's SMS segments of the day, added to its CALLER# item: never any other item
    assert sorted((s["Action"], str(s.get("Condition"))) for s in writes) == sorted(
        ("dynamodb:UpdateItem", str({"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [prefix]}}))
        for prefix in ("MSG#*", "PMID#*", "CALLER#*")
    )
