"""The feature flags' AppConfig store in the template: resources, content, validator, grants."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from aws_cdk.assertions import Template

from infra.flags import FLAGS_FILE, READ_ACTIONS
from sendledger import names
from tests.infra.conftest import default_template, resources


@pytest.fixture(scope="module")
def template() -> Template:
    return default_template()


def only(template: Template, kind: str) -> tuple[str, dict[str, Any]]:
    (found,) = resources(template, kind).items()
    return found


def ref(logical_id: str, attribute: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, attribute]}


def test_one_application_environment_freeform_profile_version_and_all_at_once_deployment(template: Template) -> None:
    application, _ = only(template, "AWS::AppConfig::Application")
    environment, _ = only(template, "AWS::AppConfig::Environment")
    profile_id, profile = only(template, "AWS::AppConfig::ConfigurationProfile")
    version_id, version = only(template, "AWS::AppConfig::HostedConfigurationVersion")
    strategy_id, strategy = only(template, "AWS::AppConfig::DeploymentStrategy")
    _, deployment = only(template, "AWS::AppConfig::Deployment")
    assert profile["Properties"]["Type"] == "AWS.Freeform" and profile["Properties"]["LocationUri"] == "hosted"
    # The deployed content is the committed file the local stack reads
    assert version["Properties"]["ContentType"] == "application/json"
    assert json.loads(version["Properties"]["Content"]) == json.loads(FLAGS_FILE.read_text())
    assert strategy["Properties"]["GrowthFactor"] == 100 and strategy["Properties"]["DeploymentDurationInMinutes"] == 0
    assert deployment["Properties"] == {
        "ApplicationId": ref(application, "ApplicationId"),
        "EnvironmentId": ref(environment, "EnvironmentId"),
        "ConfigurationProfileId": ref(profile_id, "ConfigurationProfileId"),
        "ConfigurationVersion": ref(version_id, "VersionNumber"),
        "DeploymentStrategyId": ref(strategy_id, "Id"),
    }


def test_the_validator_takes_the_committed_flags_and_refuses_values_the_domain_does_not_know(
    template: Template,
) -> None:
    _, profile = only(template, "AWS::AppConfig::ConfigurationProfile")
    (validator,) = profile["Properties"]["Validators"]
    assert validator["Type"] == "JSON_SCHEMA"
    schema = json.loads(validator["Content"])
    committed = json.loads(FLAGS_FILE.read_text())
    jsonschema.Draft4Validator(schema).validate(committed)
    cohort = {"when_match": "sendgrid", "conditions": [{"action": "MODULO_RANGE", "key": "caller_bucket"}]}
    widened = {**committed, "email_provider": {**committed["email_provider"], "rules": {"10%": cohort}}}
    jsonschema.Draft4Validator(schema).validate(widened)
    typo = {
        **committed,
        "email_provider": {**committed["email_provider"], "rules": {"10%": {**cohort, "when_match": "sendgird"}}},
    }
    per_category = {**committed, "stale_eligibility_policy": {"default": {"security": "later"}, "boolean_type": False}}
    for refused in (typo, per_category, {"email_provider": committed["email_provider"]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft4Validator(schema).validate(refused)


def test_only_the_api_and_the_poller_read_the_profile_and_only_it(template: Template) -> None:
    application, _ = only(template, "AWS::AppConfig::Application")
    environment, _ = only(template, "AWS::AppConfig::Environment")
    profile, _ = only(template, "AWS::AppConfig::ConfigurationProfile")
    readers = {}
    for logical_id, policy in resources(template, "AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if any(action.startswith("appconfig:") for action in actions):
                readers[logical_id] = statement
    functions = ("ApiApiFunction", "IngestionPollerFunction")
    assert len(readers) == 2 and all(reader.startswith(functions) for reader in readers), readers
    for statement in readers.values():
        assert statement["Effect"] == "Allow" and sorted(statement["Action"]) == sorted(READ_ACTIONS)
        resource = json.dumps(statement["Resource"])
        assert "*" not in resource
        for part in (application, environment, profile, ":application/", "/environment/", "/configuration/"):
            assert part in resource
    for fn in resources(template, "AWS::Lambda::Function").values():
        env = fn["Properties"].get("Environment", {}).get("Variables", {})
        if names.ENV_LEDGER_TABLE in env:
            assert env[names.ENV_FLAGS_STORE] == "appconfig"
            assert env[names.ENV_FLAGS_APPCONFIG_PROFILE] == ref(profile, "ConfigurationProfileId")
