"""SMS timing by destination country: the deployment table, the status schedule it sets, and the
synth-time SLO arithmetic that states the slowest country's lag."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from infra.settings import Settings as DeploySettings
from infra.settings import SettingsError
from sendledger.domain.messages import Message, MessageState, Template
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_timing import SMS_TIMING_DEFAULTS, CountryTiming
from sendledger.settings import Settings
from sendledger.settings import SettingsError as RuntimeSettingsError
from sendledger.usecases.delivery import status_due

GB, IN, BR = "+447400123456", "+919812345678", "+5511961234567"
NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def accepted_sms(to: str, provider: str = "infrai") -> Message:
    return Message(
        "m-1",
        Channel.SMS,
        to,
        Template("alert", "1"),
        MessageState.ACCEPTED,
        "alert",
        NOW,
        NOW,
        f"sms:{to}",
        provider=provider,
    )


def test_the_shipped_table_times_fast_and_slow_routes_apart_and_the_rest_by_the_default_row() -> None:
    settings = Settings()
    assert settings.sms_timing(GB) == CountryTiming(30, 300)
    assert settings.sms_timing(IN) == CountryTiming(120, 1800)
    assert settings.sms_timing(BR) == SMS_TIMING_DEFAULTS["default"] == CountryTiming(60, 900)


def test_rows_given_replace_the_shipped_ones_field_by_field_and_survive_the_environment() -> None:
    settings = Settings.from_env({"SMS_COUNTRY_TIMING": '{"br": {"status_interval_seconds": 240}}'})
    assert settings.sms_timing(BR) == CountryTiming(240, 900)  # the default row's deadline
    assert Settings.from_env(settings.environment()).sms_country_timing == settings.sms_country_timing
    for bad in (
        '{"BRA": {"status_interval_seconds": 1}}',
        '{"BR": {"interval": 5}}',
        '{"BR": {"status_interval_seconds": 0}}',
    ):
        with pytest.raises(RuntimeSettingsError, match="SMS_COUNTRY_TIMING"):
            Settings.from_env({"SMS_COUNTRY_TIMING": bad})


def test_a_pull_only_providers_sms_is_asked_at_its_countrys_interval_an_email_at_the_providers() -> None:
    settings = Settings(sms_provider="infrai")
    assert status_due(accepted_sms(GB), settings, NOW) is not None
    assert [(status_due(accepted_sms(to), settings, NOW) or (None, NOW))[1] - NOW for to in (GB, IN, BR)] == [
        SMS_TIMING_DEFAULTS["GB"].status_interval_seconds * _second(),
        SMS_TIMING_DEFAULTS["IN"].status_interval_seconds * _second(),
        SMS_TIMING_DEFAULTS["default"].status_interval_seconds * _second(),
    ]
    assert settings.status_interval_for("infrai", Channel.EMAIL, "a@example.com") == 60  # INFRAI_STATUS_INTERVAL
    assert settings.longest_status_interval("infrai") == 120
    assert status_due(accepted_sms(GB, provider="sns"), Settings(), NOW) is None  # SNS pushes its logs


def test_synthesis_states_the_slowest_countrys_lag_and_refuses_one_beyond_the_slo() -> None:
    infrai = {"sms_provider": "infrai", "peak_events_per_second": "1"}
    lines = DeploySettings.from_context(infrai).slo_arithmetic()
    (slowest,) = [line for line in lines if "slowest SMS country" in line and line.startswith("SLO budget")]
    assert "slowest SMS country, BD (sms_country_timing) 120 s + one poll cycle 60 s = 240 s <= 300 s SLO" in slowest
    with pytest.raises(SettingsError, match="slowest SMS country, NG"):
        DeploySettings.from_context({**infrai, "sms_country_timing": {"NG": {"status_interval_seconds": 600}}})


def _second():
    from datetime import timedelta

    return timedelta(seconds=1)
