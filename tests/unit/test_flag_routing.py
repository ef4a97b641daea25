"""The `email_provider` flag routes a cohort's email: to the flagged provider when this
deployment enables it, and the evidence says so only when the flag is what decided."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from sendledger.domain.caller_settings import CallerSettings
from sendledger.domain.callers import CallerId
from sendledger.domain.flags import FlagValues
from sendledger.domain.messages import Template
from sendledger.domain.provider import Provider
from sendledger.domain.recipients import Channel
from sendledger.settings import Settings
from sendledger.usecases.send_command import Routing, SendCommand, carrier_for
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

CALLER = CallerId("arn:aws:iam::123456789012:role/cohort-app")


class CohortFlags:
    """Every caller is in the cohort the flag names."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        return FlagValues(email_provider=self.provider)


def services_with(settings: Settings, flags: CohortFlags) -> Routing:
    """What flags_for reads: the settings, the flags and the owner's (cached) caller settings."""
    return Routing(settings, flags, FakeCallerSettings(LedgerState()))


def routed(flagged: Provider, *, enabled: frozenset[Provider], pick: str | None = None) -> tuple[str, dict[str, Any]]:
    settings = Settings(table_name="t", sender_email="no-reply@example.com", email_providers=enabled)
    services = services_with(settings, CohortFlags(flagged))
    command = SendCommand(
        Channel.EMAIL, "alice@example.com", Template("alert", "1"), {}, "alert", CALLER, None, provider=pick
    )
    decision = services.flags_for(command, Channel.EMAIL)
    return carrier_for(settings, Channel.EMAIL, pick, decision), decision.evidence()


def test_a_cohort_flagged_to_an_enabled_provider_is_sent_and_recorded_there():
    provider, evidence = routed(Provider.SENDGRID, enabled=frozenset({Provider.SENDGRID}))
    assert provider == "sendgrid"
    assert evidence == {"flags": {"email_provider": "sendgrid"}}


def test_a_flag_naming_a_provider_this_deployment_does_not_enable_is_not_followed_nor_claimed():
    provider, evidence = routed(Provider.MAILGUN, enabled=frozenset({Provider.SENDGRID}))
    assert provider == "ses"
    assert evidence == {}


@pytest.mark.parametrize("pick", ["ses", "sendgrid"])
def test_the_callers_explicit_pick_wins_and_the_evidence_does_not_credit_the_flag(pick):
    provider, evidence = routed(Provider.SENDGRID, enabled=frozenset({Provider.SENDGRID}), pick=pick)
    assert provider == pick
    assert evidence == {}


def test_sms_is_not_routed_by_the_email_flag():
    settings = Settings(table_name="t", sender_email="no-reply@example.com", email_providers={Provider.SENDGRID})
    services = services_with(settings, CohortFlags(Provider.SENDGRID))
    command = SendCommand(Channel.SMS, "+12065550100", Template("alert", "1"), {}, "alert", CALLER, None)
    decision = services.flags_for(command, Channel.SMS)
    assert carrier_for(settings, Channel.SMS, None, decision) == "sns"
    assert decision.evidence() == {}


class ContextFlags(CohortFlags):
    """Routes the callers whose flag context says tier=beta (what a rule on `tier` does)."""

    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        return FlagValues(email_provider=self.provider if (context or {}).get("tier") == "beta" else None)


def test_a_send_is_decided_with_its_owners_flag_context_from_the_callers_settings():
    # Given a cohort of callers by their flag context, and one caller whose settings put it there
    settings = Settings(table_name="t", sender_email="no-reply@example.com", email_providers={Provider.SENDGRID})
    services = services_with(settings, ContextFlags(Provider.SENDGRID))
    services.caller_settings.put(CallerSettings(CALLER, flag_context={"tier": "beta"}))
    other = CallerId("arn:aws:iam::123456789012:role/other-app")
    # When each sends an email, Then the flag routes the beta caller's and not the other's
    for caller, provider in ((CALLER, "sendgrid"), (other, "ses")):
        command = SendCommand(Channel.EMAIL, "alice@example.com", Template("alert", "1"), {}, "alert", caller, None)
        decision = services.flags_for(command, Channel.EMAIL)
        assert carrier_for(settings, Channel.EMAIL, None, decision) == provider
