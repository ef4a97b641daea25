"""A deployment creates only its enabled providers' resources, and synthesis checks each one's
own delay against the suppression-lag SLO (infra/providers/, the settings fragments)."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Template

from infra.settings import Settings, SettingsError
from tests.infra.conftest import resources, synth


@pytest.fixture(scope="module")
def infrai_and_sendgrid() -> Template:
    # Infrai carries email by default and SMS; SendGrid is enabled beside it (a cohort's provider).
    return synth(email_provider="infrai", email_providers="sendgrid", sms_provider="infrai", peak_events_per_second=1)


def test_a_deployment_without_ses_or_sns_has_none_of_their_resources(infrai_and_sendgrid: Template) -> None:
    assert resources(infrai_and_sendgrid, "AWS::SES::ConfigurationSet") == {}
    assert resources(infrai_and_sendgrid, "AWS::SES::EmailIdentity") == {}
    groups = json.dumps(resources(infrai_and_sendgrid, "AWS::Logs::LogGroup"))
    assert "DirectPublishToPhoneNumber" not in groups
    functions = resources(infrai_and_sendgrid, "AWS::Lambda::Function")
    assert not any(logical.startswith("Sns") for logical in functions), "no SMS delivery-status handler"
    document = json.dumps(resources(infrai_and_sendgrid, "AWS::IAM::Policy"))
    assert "ses:SendEmail" not in document and "sns:Publish" not in document


def test_each_enabled_provider_brings_its_own(infrai_and_sendgrid: Template) -> None:
    secrets = set(resources(infrai_and_sendgrid, "AWS::SecretsManager::Secret"))
    assert any(logical.startswith("InfraiApiKey") for logical in secrets)
    assert any(logical.startswith("SendGridApiKey") for logical in secrets)
    keys = " ".join(
        r["Properties"]["RouteKey"] for r in resources(infrai_and_sendgrid, "AWS::ApiGatewayV2::Route").values()
    )
    assert "/sendgrid/" in keys and "/infrai/" not in keys, "Infrai pushes nothing: no webhook route"
    outputs = infrai_and_sendgrid.to_json()["Outputs"]
    assert {"InfraiApiKeySecretArn", "SendGridWebhookUrl"} <= set(outputs)
    assert "SesConfigurationSetName" not in outputs


def test_mailguns_finality_and_infrais_pull_interval_are_checked_against_the_slo() -> None:
    with pytest.raises(SettingsError) as mailgun:
        Settings.from_context({"email_provider": "mailgun"})
    assert "SLO cannot be met with mailgun" in str(mailgun.value)
    assert "(1800) + one poll cycle (60) = 1920 s exceeds suppression_lag_slo_seconds (300)" in str(mailgun.value)
    assert "at least 1920" in str(mailgun.value)
    slow = {"email_provider": "infrai", "peak_events_per_second": "1", "infrai_status_interval_seconds": "600"}
    with pytest.raises(SettingsError) as infrai:
        Settings.from_context(slow)
    assert "SLO cannot be met with infrai" in str(infrai.value) and "(600)" in str(infrai.value)
    with pytest.raises(SettingsError, match="3000 statuses per cycle > infrai_statuses_per_cycle 100"):
        Settings.from_context({"email_provider": "infrai"})  # the default peak of 50/s, pulled
    fits = Settings.from_context(
        {"email_provider": "infrai", "infrai_statuses_per_cycle": "1000", "peak_events_per_second": "10"}
    )
    assert any(line.startswith("SLO budget (infrai)") and "180 s <= 300 s" in line for line in fits.slo_arithmetic())


def test_the_complaint_schedule_states_its_lag_and_a_first_read_too_late_for_the_slo_fails_synthesis() -> None:
    infrai = {"email_provider": "infrai", "peak_events_per_second": "1"}
    lines = Settings.from_context(infrai).slo_arithmetic()
    [budget] = [line for line in lines if line.startswith("complaint lag (infrai)")]
    assert "60 s + one poll cycle 60 s = 180 s <= 300 s SLO" in budget
    assert "never more than 21600 s" in budget and "until 259200 s" in budget and "21 reads per delivery" in budget
    assert any(line.startswith("complaint lag at peak (infrai)") for line in lines)
    with pytest.raises(SettingsError) as late:
        Settings.from_context({**infrai, "infrai_complaint_first_read_seconds": "600"})
    assert "SLO cannot be met for a complaint after delivery with infrai" in str(late.value)
    assert "(600) + one poll cycle (60) = 720 s exceeds suppression_lag_slo_seconds (300)" in str(late.value)
    assert "infrai_complaint_first_read_seconds to at most 180" in str(late.value)
    # The first step alone is checked: a late read's wait (the cap) is what the schedule states, not a failure.
    assert Settings.from_context({**infrai, "infrai_complaint_max_read_interval_seconds": "86400"})
    never = Settings.from_context({**infrai, "infrai_complaint_horizon_seconds": "0"}).slo_arithmetic()
    assert not any(line.startswith("complaint lag") for line in never)
