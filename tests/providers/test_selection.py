"""EMAIL_PROVIDER picks the one email adapter; the stack and the Lambdas read the same setting."""

from __future__ import annotations

import pytest

from infra.settings import Settings as DeploySettings
from sendledger import bootstrap
from sendledger.domain.provider import Provider
from sendledger.providers.sendgrid.settings import SendGridSettings
from sendledger.providers.ses.sender import SesEmailSender
from sendledger.settings import Settings, SettingsError


def test_email_provider_defaults_to_ses_and_reads_the_environment() -> None:
    assert Settings.from_env({}).email_provider is Provider.SES
    assert Settings.from_env({"EMAIL_PROVIDER": "sendgrid"}).email_provider is Provider.SENDGRID
    with pytest.raises(SettingsError, match="EMAIL_PROVIDER='postfix'"):
        Settings.from_env({"EMAIL_PROVIDER": "postfix"})


def test_cdk_context_email_provider_reaches_the_lambda_environment() -> None:
    deployed = DeploySettings.from_context({"email_provider": "sendgrid"})
    assert deployed.environment()["EMAIL_PROVIDER"] == "sendgrid"
    assert Settings.from_env(deployed.environment()).email_provider is Provider.SENDGRID


def test_bootstrap_builds_the_adapter_of_the_configured_provider() -> None:
    assert isinstance(bootstrap.email_sender(Settings()), SesEmailSender)


def test_sendgrid_needs_its_api_key_secret_and_then_gets_its_adapter() -> None:
    from sendledger.providers.sendgrid.sender import SendGridEmailSender

    chosen = Settings(email_provider=Provider.SENDGRID)
    with pytest.raises(SettingsError, match="SENDGRID_API_KEY_SECRET_ARN"):
        bootstrap.email_sender(chosen)
    configured = chosen.configure_provider(SendGridSettings, api_key_secret_arn="arn:aws:secretsmanager:x")
    sender = bootstrap.email_sender(configured)
    assert isinstance(sender, SendGridEmailSender) and sender.url == "https://api.sendgrid.com/v3/mail/send"
