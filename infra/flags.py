"""Feature flags deployed: the AppConfig application, environment and freeform profile the
Lambdas read with Powertools' AppConfigStore, its first content (the committed
functions/sendledger/feature_flags.json, the same file the local stack reads) and the grants.

The profile is freeform JSON in the Powertools schema (not AWS.AppConfig.FeatureFlags, whose
format Powertools does not read), with a JSON Schema validator built from the domain's enums:
AppConfig refuses a deployment that names an unknown provider or policy before any Lambda sees it.
Deployments go out all at once: a cohort is chosen by the flags' own MODULO_RANGE rules, so every
container must agree on the rules (within the cache TTL), not receive them at different times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_appconfig as appconfig
from aws_cdk import aws_iam as iam
from constructs import Construct

from sendledger import names
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.flags import DEPLOYMENT, Flag
from sendledger.domain.messages import CATEGORIES
from sendledger.domain.provider import carriers
from sendledger.domain.recipients import Channel
from sendledger.settings import FlagStore

FLAGS_FILE = Path(__file__).resolve().parents[1] / "functions" / "sendledger" / "feature_flags.json"
READ_ACTIONS = ("appconfig:StartConfigurationSession", "appconfig:GetLatestConfiguration")


class FeatureFlagsStore(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, stage: str) -> None:
        super().__init__(scope, construct_id)
        self.application = appconfig.CfnApplication(
            self, "Application", name=f"sendledger-{stage}", description="sendledger feature flags"
        )
        self.environment = appconfig.CfnEnvironment(
            self, "Environment", application_id=self.application.attr_application_id, name=stage
        )
        self.profile = appconfig.CfnConfigurationProfile(
            self,
            "Profile",
            application_id=self.application.attr_application_id,
            name="feature-flags",
            location_uri="hosted",
            type="AWS.Freeform",
            description="Powertools Feature Flags schema; docs/flags.md",
            validators=[
                appconfig.CfnConfigurationProfile.ValidatorsProperty(type="JSON_SCHEMA", content=validator_schema())
            ],
        )
        self.version = appconfig.CfnHostedConfigurationVersion(
            self,
            "Version",
            application_id=self.application.attr_application_id,
            configuration_profile_id=self.profile.attr_configuration_profile_id,
            content=FLAGS_FILE.read_text(),
            content_type="application/json",
            description="functions/sendledger/feature_flags.json at deploy time",
        )
        self.strategy = appconfig.CfnDeploymentStrategy(
            self,
            "AllAtOnce",
            name=f"sendledger-{stage}-flags-all-at-once",
            deployment_duration_in_minutes=0,
            growth_factor=100,
            final_bake_time_in_minutes=0,
            replicate_to="NONE",
            description="Every container gets new rules within its cache TTL; cohorts are the rules' own",
        )
        self.deployment = appconfig.CfnDeployment(
            self,
            "Deployment",
            application_id=self.application.attr_application_id,
            environment_id=self.environment.attr_environment_id,
            configuration_profile_id=self.profile.attr_configuration_profile_id,
            configuration_version=self.version.attr_version_number,
            deployment_strategy_id=self.strategy.attr_id,
        )

    def lambda_environment(self) -> dict[str, str]:
        return {
            names.ENV_FLAGS_STORE: FlagStore.APPCONFIG.value,
            names.ENV_FLAGS_APPCONFIG_APPLICATION: self.application.attr_application_id,
            names.ENV_FLAGS_APPCONFIG_ENVIRONMENT: self.environment.attr_environment_id,
            names.ENV_FLAGS_APPCONFIG_PROFILE: self.profile.attr_configuration_profile_id,
        }

    def grant_read(self, role: iam.IRole) -> None:
        """Both data-plane calls on this one configuration (application/environment/profile), nothing else."""
        configuration = cdk.Stack.of(self).format_arn(
            service="appconfig",
            resource="application",
            resource_name=(
                f"{self.application.attr_application_id}/environment/{self.environment.attr_environment_id}"
                f"/configuration/{self.profile.attr_configuration_profile_id}"
            ),
            arn_format=cdk.ArnFormat.SLASH_RESOURCE_NAME,
        )
        role.add_to_principal_policy(iam.PolicyStatement(actions=list(READ_ACTIONS), resources=[configuration]))


def validator_schema() -> str:
    """JSON Schema of the profile: the Powertools shape, with each flag's values the domain's."""
    providers = [DEPLOYMENT, *(provider.value for provider in carriers(Channel.EMAIL))]
    choices = [choice.value for choice in StalePolicy]
    values: dict[Flag, dict[str, Any]] = {
        Flag.EMAIL_PROVIDER: {"enum": providers},
        Flag.STALE_ELIGIBILITY_POLICY: {
            "oneOf": [
                {"enum": [DEPLOYMENT, *choices]},
                {
                    "type": "object",
                    "properties": {category: {"enum": choices} for category in CATEGORIES},
                    "additionalProperties": False,
                },
            ]
        },
    }
    flags = {
        flag.value: {
            "type": "object",
            "required": ["default", "boolean_type"],
            "properties": {
                "default": value,
                "boolean_type": {"enum": [False]},
                "rules": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["when_match", "conditions"],
                        "properties": {"when_match": value, "conditions": {"type": "array", "minItems": 1}},
                    },
                },
            },
        }
        for flag, value in values.items()
    }
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",  # what AppConfig validates with
        "type": "object",
        "properties": flags,
        "required": list(flags),
    }
    return json.dumps(schema, separators=(",", ":"))
