"""The dependencies every use case needs, assembled once per warm container."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sendledger.domain.clock import Clock
from sendledger.domain.provider import Backoff
from sendledger.ports.flags import FeatureFlags, NoFlags
from sendledger.ports.messages import MessageStore
from sendledger.ports.poller_state import PollerStateStore
from sendledger.ports.providers import EmailSender, SmsSender
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
    email: EmailSender
    sms: SmsSender
    clock: Clock
    settings: Settings
    sleep: Callable[[float], None] = time.sleep
    backoff: Backoff = field(default_factory=Backoff)
    # Per-caller flags; without a store every flag defers to the settings (bootstrap wires the store).
    flags: FeatureFlags = field(default_factory=NoFlags)
