"""Runtime settings: one definition per setting, read from the environment names in names.py."""

from __future__ import annotations

import pytest

from sendledger import names
from sendledger.settings import Settings, SettingsError
from sendledger.settings_forms import format_stale_policy, parse_stale_policy


def test_unset_and_empty_variables_take_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({names.ENV_POLL_INTERVAL_SECONDS: ""}).poll_interval_seconds == 60


def test_every_setting_is_read_from_its_variable() -> None:
    settings = Settings.from_env(
        {
            names.ENV_LEDGER_TABLE: "t",
            names.ENV_POLL_INTERVAL_SECONDS: "5",
            names.ENV_INGESTION_MODE: "push",
            names.ENV_STALE_ELIGIBILITY_POLICY: "security=defer",
            names.ENV_LOCAL_PRINCIPAL: "me",
        }
    )
    assert (settings.table_name, settings.poll_interval_seconds, settings.ingestion_mode) == ("t", 5, "push")
    assert settings.stale_eligibility_policy == {"transactional": "allow", "alert": "allow", "security": "defer"}
    assert settings.local_principal == "me"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        (names.ENV_POLL_INTERVAL_SECONDS, "sixty"),
        (names.ENV_RESET_MAX_FAILED_ATTEMPTS, "-1"),
        (names.ENV_INGESTION_MODE, "stream"),
        (names.ENV_STALE_ELIGIBILITY_POLICY, "security=maybe"),
        (names.ENV_STALE_ELIGIBILITY_POLICY, "marketing=defer"),
    ],
)
def test_an_invalid_value_fails_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(SettingsError, match=rf"{variable}={value!r}"):
        Settings.from_env({variable: value})


def test_stale_policy_round_trips_through_its_text_form() -> None:
    for text in ("allow", "defer", "transactional=allow,alert=allow,security=defer"):
        assert format_stale_policy(parse_stale_policy(text)) == text


def test_the_written_environment_reads_back_as_the_same_tunables() -> None:
    # What CDK writes into every Lambda's environment must be what Settings.from_env reads.
    from sendledger.domain.provider import Provider
    from sendledger.domain.sms_timing import CountryTiming
    from sendledger.settings import Tunables

    chosen = Settings().replace(
        {
            "email_providers": frozenset({Provider.SES, Provider.MAILGUN}),
            "sms_allowed_countries": frozenset({"US", "CA"}),
            "sms_country_timing": {**Settings().sms_country_timing, "FR": CountryTiming(45, 600)},
            "stale_eligibility_policy": "security=defer",
            "admin_principals": ("arn:aws:iam::123456789012:role/admin", "arn:aws:iam::123456789012:user/ops"),
            "caller_tenants": {"arn:aws:iam::123456789012:role/app": "tenant-a"},
            "inject_timeouts": True,
            "poll_apply_concurrency": 3,
        }
    )
    read = Settings.from_env(chosen.environment())
    tunables = [name for name in Tunables.rules() if name != "providers"]
    assert {name: getattr(read, name) for name in tunables} == {name: getattr(chosen, name) for name in tunables}
