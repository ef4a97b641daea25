"""A send command and how it is routed: the flags, test mode and carrier that decide it.

What the caller asked for (SendCommand), and the decisions taken from the owner's settings and
flags before any write (usecases/intents.py writes the intent they shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.callers import CallerId
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.errors import InvalidRequest
from sendledger.domain.escalation import Escalation
from sendledger.domain.flags import Flag, FlagDecision
from sendledger.domain.messages import Template
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value

if TYPE_CHECKING:
    from sendledger.ports.callers import CallerSettingsStore
    from sendledger.ports.flags import FeatureFlags
    from sendledger.settings import Settings

logger = Logger(child=True)


@value
class SendCommand:
    channel: Channel
    to: str
    template: Template
    params: dict[str, str]
    category: str
    caller: CallerId  # keys and messages are scoped by it
    idempotency_header: str | None
    event_id: str | None = None
    escalation: Escalation | None = None
    parent_key: str | None = None
    owner: str | None = None  # escalation fallbacks belong to the parent's caller
    provider: str | None = None  # the caller's pick among the enabled providers (None: the deployment's)
    test: bool | None = None  # test mode; None: the owner's settings decide (a fallback follows its parent)
    locale: str | None = None  # the locale asked for (pt-BR falls back to pt, then the default)
    # An escalation fallback renders its parent's version (the template's owner and locale as
    # recorded), retired or not; a new request resolves the caller's template, then the deployment's.
    pinned: bool = False


@dataclass(frozen=True)
class Routing:
    """How a send is decided before any write: the owner's test mode and flags."""

    settings: Settings
    flags: FeatureFlags  # per caller; without a store every flag defers to the settings
    caller_settings: CallerSettingsStore  # test mode and flag context, from the container's cache

    def test_mode_for(self, command: SendCommand) -> bool:
        """Whether the owner's sends are simulated (domain/test_mode.py). The settings store answers
        from the container's cache (CALLER_SETTINGS_CACHE): one item read per caller and period."""
        if command.test is not None:
            return command.test
        return self.caller_settings.get(CallerId(command.owner or command.caller)).test_mode

    def flags_for(self, command: SendCommand, channel: Channel) -> FlagDecision:
        """The flag values that decide this send: the owner's (an escalation fallback's is its
        parent's caller), with the deployment's settings where a flag defers to them."""
        settings = self.settings
        owner = CallerId(command.owner or command.caller)
        # The owner's settings come from the container's cache, as test_mode_for's do: no request.
        values = self.flags.values_for(owner, self.caller_settings.get(owner).flag_context)
        decision = values.decide(
            email=channel is Channel.EMAIL,
            category=command.category,
            default_provider=settings.email_provider,
            default_stale=StalePolicy(settings.stale_eligibility_policy.get(command.category, StalePolicy.ALLOW)),
        )
        flagged = decision.email_provider if Flag.EMAIL_PROVIDER in decision.flagged else None
        if flagged is None or (command.provider is None and settings.carries(flagged, Channel.EMAIL)):
            return decision
        if command.provider is None:  # a cohort routed to a provider this deployment does not enable
            logger.warning("email_provider flag names a provider not enabled here", extra={"flagged": flagged.value})
        # The caller's explicit pick, or the deployment's provider, decides: the evidence must not say the flag did.
        return FlagDecision(
            email_provider=settings.email_provider,
            stale_eligibility_policy=decision.stale_eligibility_policy,
            flagged=decision.flagged - {Flag.EMAIL_PROVIDER},
        )


def carrier_for(
    settings: Settings, channel: Channel, requested: str | None = None, flags: FlagDecision | None = None
) -> str:
    """The provider a new message of `channel` is sent through (recorded on it for good): the
    caller's pick if this deployment enables it for the channel, else the one its flags decided
    (flags_for: an enabled provider), else the deployment's own."""
    if requested is None:
        if channel is Channel.EMAIL and flags is not None and flags.email_provider is not None:
            return flags.email_provider.value
        return (settings.sms_provider if channel is Channel.SMS else settings.email_provider).value
    if not settings.carries(requested, channel):
        enabled = settings.enabled_email_providers if channel is Channel.EMAIL else [settings.sms_provider]
        detail = f"{requested!r} does not carry {channel.value} here (enabled: {', '.join(p.value for p in enabled)})"
        raise InvalidRequest(detail, errors=[{"field": "provider", "message": detail}])
    return requested
