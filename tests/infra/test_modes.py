"""Settings that change the template, and settings that must refuse to synthesize.

`/v1/admin/*` twice: the admin invoke policy alone grants its routes at the gateway, and the
api Lambda gets the same list (it checks again: a broad IAM grant is not enough)."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Template

from infra.settings import Settings, SettingsError
from sendledger import names
from sendledger.settings import Settings as RuntimeSettings
from sendledger.settings import Tunables, fragment_of
from tests.infra.conftest import resources, synth

ACCOUNT = "123456789012"
ADMINS = f"arn:aws:iam::{ACCOUNT}:role/service-role/ops arn:aws:iam::{ACCOUNT}:user/alice"


@pytest.fixture(scope="module")
def push_prod() -> Template:
    return synth(ingestion_mode="push", stage="prod", poll_interval_seconds=120, admin_principals=ADMINS)


def test_push_mode_attaches_the_queue_with_partial_failures(push_prod: Template) -> None:
    mappings = push_prod.find_resources("AWS::Lambda::EventSourceMapping").values()
    # Besides the status publisher's stream mapping (StartingPosition) and the callbacks' queue, one: the SES queue's.
    queued = [m["Properties"]["FunctionName"]["Ref"] for m in mappings if "StartingPosition" not in m["Properties"]]
    assert len([name for name in queued if not name.startswith("StatusOutCallbacksFunction")]) == 1
    push_prod.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {"FunctionResponseTypes": ["ReportBatchItemFailures"]},
    )
    push_prod.has_resource_properties("AWS::Events::Rule", {"ScheduleExpression": "rate(2 minutes)"})


def test_admin_routes_pass_the_gateway_only_on_the_admin_invoke_policy(push_prod: Template) -> None:
    """The first of the admin routes' two checks: every route requires IAM, and the admin routes'
    execute-api ARNs are granted by the admin policy alone (the client policy names none)."""
    routes = resources(push_prod, "AWS::ApiGatewayV2::Route").values()
    admin = sorted(r["Properties"]["RouteKey"] for r in routes if " /v1/admin/" in r["Properties"]["RouteKey"])
    assert admin and all(r["Properties"]["AuthorizationType"] == "AWS_IAM" for r in routes)
    granted: dict[str, list[str]] = {}
    for logical, policy in resources(push_prod, "AWS::IAM::ManagedPolicy").items():
        [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
        granted[logical] = [json.dumps(arn) for arn in statement["Resource"]]
    [admin_policy] = [name for name in granted if name.startswith("ApiAdminInvokePolicy")]
    assert len(granted[admin_policy]) == len(admin)
    assert all("/v1/admin/" in arn for arn in granted[admin_policy])
    assert not any("/v1/admin/" in arn for name, arns in granted.items() if name != admin_policy for arn in arns)


def test_the_api_lambda_checks_the_same_admin_principals(push_prod: Template) -> None:
    [api_function] = [
        fn
        for fn in resources(push_prod, "AWS::Lambda::Function").values()
        if fn["Properties"].get("Handler") == names.API_HANDLER
    ]
    admins = api_function["Properties"]["Environment"]["Variables"][names.ENV_ADMIN_PRINCIPALS]
    assert admins.split() == [f"arn:aws:iam::{ACCOUNT}:role/ops", f"arn:aws:iam::{ACCOUNT}:user/alice"]


def test_outside_dev_the_ledger_is_protected(push_prod: Template) -> None:
    push_prod.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": {"DeletionProtectionEnabled": True},
        },
    )


@pytest.mark.parametrize(
    "context",
    [
        {"poll_interval_seconds": "900"},
        {"poll_interval_seconds": "240"},
        {"poll_interval_seconds": "120", "suppression_lag_slo_seconds": "200"},
    ],
)
def test_slo_violation_refuses_to_synthesize(context: dict[str, str]) -> None:
    with pytest.raises(SettingsError, match="SLO cannot be met"):
        Settings.from_context(context)


def test_a_peak_rate_the_poller_cannot_drain_refuses_to_synthesize() -> None:
    with pytest.raises(SettingsError, match="peak event rate cannot be drained") as refused:
        Settings.from_context({"peak_events_per_second": "2000"})
    # The message shows the arithmetic: 2000/s x 60 s = 120000 events; x 25 ms / 8 = 375 s > 60 s
    message = str(refused.value)
    assert "2000 events/s x 60 s poll interval = 120000 events per cycle" in message
    assert "120000 x 25 ms / 8 concurrent applies = 375 s > 60 s poller timeout" in message
    assert "poll_apply_concurrency to at least 50" in message
    assert Settings.from_context({"peak_events_per_second": "2000", "poll_apply_concurrency": "50"})


def test_the_default_peak_rate_drains_within_one_poll() -> None:
    settings = Settings.from_context({})
    assert (settings.peak_events_per_second, settings.poll_apply_concurrency) == (50, 8)
    assert settings.drain_seconds == 3000 * 0.025 / 8
    assert "= 9.4 s <= 60 s poller timeout" in settings.drain_arithmetic()


def test_default_and_sixty_seconds_meet_the_slo() -> None:
    assert Settings.from_context({"poll_interval_seconds": "60"}).poll_interval_seconds == 60
    assert Settings.from_context({}).worst_case_lag_seconds <= 300


@pytest.mark.parametrize(
    "context",
    [
        {"ingestion_mode": "stream"},
        {"poll_interval_seconds": "90"},
        {"reset_url_template": "http://x/?t={token}"},
        {"sender_email": "nobody"},
        {"stale_eligibility_policy": "security=maybe"},
        {"bundle": "perhaps"},
    ],
)
def test_invalid_settings_are_rejected(context: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        Settings.from_context(context)


def test_an_invalid_context_value_is_named() -> None:
    with pytest.raises(SettingsError, match=r"poll_interval_seconds='often'"):
        Settings.from_context({"poll_interval_seconds": "often"})


def test_the_lambdas_read_back_every_tunable_cdk_sets() -> None:
    context = {
        "poll_interval_seconds": "120",
        "ingestion_mode": "push",
        "stale_eligibility_policy": "alert=defer",
        "admin_principals": ["arn:aws:iam::123456789012:role/ops/oncall"],  # cdk.json takes a list
        "caller_tenants": "arn:aws:iam::123456789012:role/a=acme arn:aws:iam::123456789012:role/b=acme",
    }
    deployed = Settings.from_context(context)
    runtime = RuntimeSettings.from_env(deployed.environment())
    for name in Tunables.rules():
        if name != "providers":
            assert getattr(runtime, name) == getattr(deployed, name), name
    for provider in deployed.enabled_providers:  # each enabled provider's tunables too
        fragment = fragment_of(provider.value)
        assert runtime.provider(fragment) == deployed.provider(fragment), provider
