"""The dependencies every use case needs, assembled once per warm container."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sendledger.domain.clock import Clock
from sendledger.domain.provider import Backoff
from sendledger.domain.recipients import Channel
from sendledger.ports.callers import CallerSettingsStore, CallersInMemory
from sendledger.ports.flags import FeatureFlags, NoFlags
from sendledger.ports.messages import MessageStore
from sendledger.ports.poller_state import PollerStateStore
from sendledger.ports.providers import EmailSender, SimulatedCarriers, SmsSender
from sendledger.ports.recipients import RecipientStore
from sendledger.ports.resets import ResetStore

if TYPE_CHECKING:
    # pydantic loads with the composition root, not with every handler module.
    from sendledger.settings import Settings


@dataclass
class Services:
    messages: MessageStore
    recipients: RecipientStore
    resets: ResetStore
    poller_state: PollerStateStore
    email: EmailSender  # the default email provider's (settings.email_provider)
    sms: SmsSender  # the SMS provider's (settings.sms_provider)
    clock: Clock
    settings: Settings
    sleep: Callable[[float], None] = time.sleep
    backoff: Backoff = field(default_factory=Backoff)
    # The other email providers enabled beside the default, by name (built on first use).
    other_email: Mapping[str, EmailSender] = field(default_factory=dict)

    def email_sender(self, provider: str) -> EmailSender | None:
        """Who carries an email of `provider` now (None: no longer enabled here)."""
        if not self.settings.carries(provider, Channel.EMAIL):
            return None
        return self.email if provider == self.settings.email_provider else self.other_email.get(provider)

    def sms_sender(self, provider: str) -> SmsSender | None:
        return self.sms if self.settings.carries(provider, Channel.SMS) else None

    # Per-caller flags; without a store every flag defers to the settings (bootstrap wires the store).
    flags: FeatureFlags = field(default_factory=NoFlags)
    # Per-caller settings (test mode, flag context, callback URL); bootstrap wires the ledger's items.
    caller_settings: CallerSettingsStore = field(default_factory=CallersInMemory)
    # What carries a test caller's messages (bootstrap builds it on first use); None: nothing
    # does here, and a test message waits `pending` rather than ever reaching a real provider.
    simulated: SimulatedCarriers | None = None
