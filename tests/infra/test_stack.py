"""What matters in the synthesized template (poll mode, the default)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from infra import constants as c
from sendledger import names
from sendledger.providers.ses.settings import ENV_CONFIGURATION_SET as SES_CONFIGURATION_SET_VAR
from sendledger.providers.ses.settings import ENV_EVENTS_QUEUE_URL as SES_EVENTS_QUEUE_URL_VAR
from sendledger.providers.sns.settings import ENV_FAILURE_LOG_GROUP as SMS_FAILURE_LOG_GROUP_VAR
from sendledger.providers.sns.settings import ENV_SUCCESS_LOG_GROUP as SMS_SUCCESS_LOG_GROUP_VAR
from tests.infra.conftest import default_template, resources


@pytest.fixture(scope="module")
def template() -> Template:
    return default_template()


def _statements(template: Template) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
        for logical_id, res in resources(template, kind).items():
            for statement in res["Properties"]["PolicyDocument"]["Statement"]:
                found.append((logical_id, statement))
    for logical_id, res in resources(template, "AWS::IAM::Role").items():
        for policy in res["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                found.append((logical_id, statement))
    return found


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_the_front_door_is_an_http_api_invoking_the_api_with_payload_format_1_0(template: Template) -> None:
    assert resources(template, "AWS::ApiGateway::RestApi") == {}
    [api] = resources(template, "AWS::ApiGatewayV2::Api").values()
    assert api["Properties"]["ProtocolType"] == "HTTP"
    [integration] = resources(template, "AWS::ApiGatewayV2::Integration").values()
    assert integration["Properties"]["PayloadFormatVersion"] == "1.0"
    assert "ApiApiFunction" in json.dumps(integration["Properties"]["IntegrationUri"])


def test_every_api_route_uses_iam(template: Template) -> None:
    routes = resources(template, "AWS::ApiGatewayV2::Route")
    # Every route but the provider webhooks, which exist only where a provider that pushes is enabled.
    iam_routes = [(m, path) for m, path in names.API_ROUTES if not path.startswith(names.PROVIDERS_PATH)]
    assert len(routes) == len(iam_routes) >= 28  # and HEAD beside each GET
    assert {r["Properties"]["RouteKey"] for r in routes.values()} == {f"{m} {path}" for m, path in iam_routes}
    for route in routes.values():
        assert route["Properties"]["AuthorizationType"] == "AWS_IAM"


def test_routes_match_spec(template: Template) -> None:
    paths = {
        r["Properties"]["RouteKey"].split(" ")[1] for r in resources(template, "AWS::ApiGatewayV2::Route").values()
    }
    assert {"/v1/messages", "/v1/messages/{message_id}", "/v1/password-resets/consume", "/v1/suppressions/{recipient}",
            "/v1/admin/suppressions/{recipient}", "/healthz", "/openapi.json", "/v1/password-resets/{reset_id}",
            "/v1/evidence", "/v1/templates", "/v1/templates/{template_id}",
            "/v1/templates/{template_id}/versions/{version}", "/v1/templates/{template_id}/versions/{version}/preview",
            "/v1/templates/{template_id}/versions/{version}/retire"} <= paths  # fmt: skip


def test_stage_is_throttled_and_access_logged(template: Template) -> None:
    [stage] = resources(template, "AWS::ApiGatewayV2::Stage").values()
    properties = stage["Properties"]
    assert properties["DefaultRouteSettings"] == {"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100}
    assert properties["AutoDeploy"] is True
    access = properties["AccessLogSettings"]
    assert "AccessLogs" in json.dumps(access["DestinationArn"])
    fields = json.loads(access["Format"])
    # Evidence an operator reads per request; the caller by ARN, never a body or a header.
    assert {"requestId", "route", "status", "userArn", "error"} <= set(fields)
    assert all(value.startswith("$context.") for value in fields.values())


def test_no_wildcard_actions_and_star_resources_only_where_justified(template: Template) -> None:
    for logical_id, statement in _statements(template):
        if statement["Effect"] != "Allow":
            continue
        actions = _as_list(statement["Action"])
        for action in actions:
            assert action != "*" and not action.endswith(":*"), (logical_id, action)
        if "*" in _as_list(statement["Resource"]):
            assert set(actions) <= c.RESOURCE_STAR_ACTIONS, (logical_id, actions)


def test_lambda_roles_have_no_managed_policies(template: Template) -> None:
    roles = resources(template, "AWS::IAM::Role")
    # The functions' roles (API Gateway's account logging role uses AWS's managed policy, by design).
    ours = {k: v for k, v in roles.items() if k.startswith(("Api", "Ingestion", "Sns")) and "FunctionRole" in k}
    assert len(ours) == 3
    for role in ours.values():
        assert "ManagedPolicyArns" not in role["Properties"]


def test_admin_routes_are_granted_separately(template: Template) -> None:
    policies = resources(template, "AWS::IAM::ManagedPolicy")
    by_scope: dict[str, str] = {}
    for logical_id, policy in policies.items():
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert statement["Action"] == "execute-api:Invoke"
        arns = [str(r) for r in _as_list(statement["Resource"])]
        admin = ["/v1/admin/" in arn for arn in arns]
        assert all(admin) or not any(admin), logical_id
        by_scope["admin" if all(admin) else "client"] = logical_id
    assert set(by_scope) == {"admin", "client"}


def test_lambdas_arm64_newest_python_traced(template: Template) -> None:
    functions = {
        k: v for k, v in resources(template, "AWS::Lambda::Function").items()
        if v["Properties"].get("Handler", "").startswith("sendledger.")
    }  # fmt: skip
    handlers = {f["Properties"]["Handler"] for f in functions.values()}
    assert handlers == {
        names.API_HANDLER, names.POLLER_HANDLER, names.SMS_DELIVERY_LOGS_HANDLER, names.PUBLISHER_HANDLER,
        names.CALLBACKS_HANDLER,
    }  # fmt: skip
    for fn in functions.values():
        props = fn["Properties"]
        assert props["Architectures"] == ["arm64"]
        assert props["Runtime"] == "python3.14"
        assert props["TracingConfig"] == {"Mode": "Active"}
        env = props["Environment"]["Variables"]
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == names.METRICS_NAMESPACE
        assert env["PYDANTIC_DISABLE_PLUGINS"] == "__all__"  # no entry-point scan at cold start
        for var in (
            names.ENV_LEDGER_TABLE, SES_EVENTS_QUEUE_URL_VAR, names.ENV_ESCALATION_QUEUE_URL,
            SMS_SUCCESS_LOG_GROUP_VAR, SMS_FAILURE_LOG_GROUP_VAR,
            SES_CONFIGURATION_SET_VAR, names.ENV_SENDER_EMAIL, names.ENV_INGESTION_MODE,
            names.ENV_POLL_INTERVAL_SECONDS, names.ENV_RESET_WINDOW_SECONDS,
            names.ENV_UNKNOWN_GRACE_SECONDS, names.ENV_UNKNOWN_MAX_AGE_SECONDS,
            names.ENV_RESET_URL_TEMPLATE, names.ENV_RESET_MAX_FAILED_ATTEMPTS,
            names.ENV_STALE_ELIGIBILITY_POLICY, names.ENV_IDEMPOTENCY_RETENTION_DAYS,
            names.ENV_POLL_APPLY_CONCURRENCY,
        ):  # fmt: skip
            assert var in env, var
        assert env[names.ENV_POLL_INTERVAL_SECONDS] == "60"


def test_ledger_table(template: Template) -> None:
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [
                {"AttributeName": names.TABLE_PARTITION_KEY, "KeyType": "HASH"},
                {"AttributeName": names.TABLE_SORT_KEY, "KeyType": "RANGE"},
            ],
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            "TimeToLiveSpecification": {
                "AttributeName": names.TABLE_TTL_ATTRIBUTE,
                "Enabled": True,
            },
            "SSESpecification": {"SSEEnabled": True},
            "GlobalSecondaryIndexes": [
                Match.object_like(
                    {
                        "IndexName": names.DUE_WORK_INDEX,
                        "KeySchema": [
                            {"AttributeName": names.DUE_WORK_INDEX_PARTITION_KEY, "KeyType": "HASH"},
                            {"AttributeName": names.DUE_WORK_INDEX_SORT_KEY, "KeyType": "RANGE"},
                        ],
                    }
                ),
                {
                    "IndexName": names.EVIDENCE_INDEX,
                    "KeySchema": [
                        {"AttributeName": names.EVIDENCE_INDEX_PARTITION_KEY, "KeyType": "HASH"},
                        {"AttributeName": names.EVIDENCE_INDEX_SORT_KEY, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},  # one small write per send, never updated
                },
            ],
            "AttributeDefinitions": Match.array_with(
                [{"AttributeName": names.DUE_WORK_INDEX_SORT_KEY, "AttributeType": "N"}]
            ),
        },
    )


def test_schedule_rate_is_poll_interval(template: Template) -> None:
    template.has_resource_properties("AWS::Events::Rule", {"ScheduleExpression": "rate(1 minute)"})


def test_both_sms_log_groups_subscribed(template: Template) -> None:
    groups = resources(template, "AWS::Logs::LogGroup")
    sms = {
        k for k, v in groups.items()
        if "DirectPublishToPhoneNumber" in str(v["Properties"].get("LogGroupName", ""))
    }  # fmt: skip
    assert len(sms) == 2
    filters = resources(template, "AWS::Logs::SubscriptionFilter")
    assert {f["Properties"]["LogGroupName"]["Ref"] for f in filters.values()} == sms


def test_sms_attributes_custom_resource(template: Template) -> None:
    (custom,) = resources(template, "Custom::AWS").values()
    create = json.dumps(custom["Properties"]["Create"])
    for fragment in (
        "SetSMSAttributes",
        "DeliveryStatusIAMRole",
        'DeliveryStatusSuccessSamplingRate\\":\\"100',
        'DefaultSMSType\\":\\"Transactional',
    ):
        assert fragment in create, fragment
    passrole = [
        s for _, s in _statements(template) if s["Action"] == "iam:PassRole"
    ]  # fmt: skip
    assert len(passrole) == 1 and passrole[0]["Resource"] != "*"


def test_ses_events_flow_to_queue(template: Template) -> None:
    (destination,) = resources(template, "AWS::SES::ConfigurationSetEventDestination").values()
    types = destination["Properties"]["EventDestination"]["MatchingEventTypes"]
    assert set(types) == {"send", "delivery", "bounce", "complaint", "reject", "deliveryDelay"}
    assert "SnsDestination" in destination["Properties"]["EventDestination"]
    template.resource_count_is("AWS::SNS::Subscription", 1)
    queues = resources(template, "AWS::SQS::Queue").values()
    assert all(q["Properties"].get("SqsManagedSseEnabled") is True for q in queues)
    with_dlq = [q for q in queues if "RedrivePolicy" in q["Properties"]]
    assert len(with_dlq) == 4  # SES events + escalation + test outcomes + callbacks


def test_alarms_watch_the_slo_metrics(template: Template) -> None:
    metrics = {a["Properties"].get("MetricName") for a in resources(template, "AWS::CloudWatch::Alarm").values()}
    assert {
        names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS,
        names.METRIC_WATERMARK_AGE_SECONDS,
        names.METRIC_UNKNOWN_BACKLOG,
        "ApproximateNumberOfMessagesVisible",
        "5xx",  # the HTTP API's metric (a REST API's is 5XXError)
        "Errors",
        "Throttles",
    } <= metrics
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS,
            "Namespace": names.METRICS_NAMESPACE,
            "ExtendedStatistic": "p99",
            "Threshold": 300_000,
        },
    )
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)


def test_poll_mode_has_no_event_source(template: Template) -> None:
    mappings = resources(template, "AWS::Lambda::EventSourceMapping").values()
    # The status publisher's stream mapping (StartingPosition) and the callbacks' queue mapping are
    # there in both modes; no event queue of a provider is.
    queued = [m["Properties"]["FunctionName"] for m in mappings if "StartingPosition" not in m["Properties"]]
    assert len(queued) == 1 and queued[0]["Ref"].startswith("StatusOutCallbacksFunction")


def test_fingerprint_key_is_a_generated_secret_only_the_functions_read(template: Template) -> None:
    (secret_id,) = resources(template, "AWS::SecretsManager::Secret")
    template.has_resource_properties(
        "AWS::SecretsManager::Secret", {"GenerateSecretString": Match.object_like({"PasswordLength": 64})}
    )
    for fn in resources(template, "AWS::Lambda::Function").values():
        env = fn["Properties"].get("Environment", {}).get("Variables", {})
        if names.ENV_LEDGER_TABLE in env:  # ours, not CDK's custom-resource provider
            assert env[names.ENV_FINGERPRINT_SECRET_ARN] == {"Ref": secret_id}
    readers = {
        logical_id
        for logical_id, statement in _statements(template)
        if secret_id in json.dumps(statement["Resource"])
    }  # fmt: skip
    assert len(readers) == 3 and all(r.startswith(("Api", "Ingestion", "SnsSmsDeliveryLogs")) for r in readers)
    for _, statement in _statements(template):
        if secret_id in json.dumps(statement["Resource"]):
            assert statement["Action"] == "secretsmanager:GetSecretValue"


def _granted(template: Template, role_prefix: str, action: str) -> set[str]:
    """The resources (as JSON) a function's role may `action` on."""
    found: set[str] = set()
    for logical_id, statement in _statements(template):
        if (
            logical_id.startswith(role_prefix)
            and statement["Effect"] == "Allow"
            and action in _as_list(statement["Action"])
        ):
            found |= {json.dumps(resource, sort_keys=True) for resource in _as_list(statement["Resource"])}
    return found


def _arn(logical_id: str) -> str:
    return json.dumps({"Fn::GetAtt": [logical_id, "Arn"]}, sort_keys=True)


def test_functions_log_no_lambda_platform_lines_but_keep_their_own(template: Template) -> None:
    """About 1 KB of logs per send (issue 36): Lambda's START/END/REPORT lines (INFO platform events)
    are left out of every function's log; its own JSON lines keep INFO; a platform WARN still logs."""
    functions = [
        fn for fn in resources(template, "AWS::Lambda::Function").values()
        if fn["Properties"].get("Handler", "").startswith("sendledger.")
    ]  # fmt: skip
    assert len(functions) == 5
    for function in functions:
        assert function["Properties"]["LoggingConfig"] == {
            "LogFormat": "JSON",
            "SystemLogLevel": "WARN",
            "ApplicationLogLevel": "INFO",
            "LogGroup": function["Properties"]["LoggingConfig"]["LogGroup"],
        }


def test_only_the_poller_scans_and_only_the_due_work_index(template: Template) -> None:
    scanners = {
        logical_id
        for logical_id, statement in _statements(template)
        if "dynamodb:Scan" in _as_list(statement["Action"])
    }  # fmt: skip
    assert len(scanners) == 1 and next(iter(scanners)).startswith("Ingestion")
    [resource] = _granted(template, "Ingestion", "dynamodb:Scan")
    assert resource.endswith(f'"/index/{names.DUE_WORK_INDEX}"]]}}'), resource
