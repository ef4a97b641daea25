"""What a slice does not do, by default: a slice overrides what its provider offers.

Pure (imported with every slice's package): the builders import their adapters when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.recipients import Channel

if TYPE_CHECKING:
    from sendledger.ports.log_subscription import LogSubscription
    from sendledger.ports.providers import AcceptanceLookup, EmailSender, EventLane, EventSink, LaneStores, SmsSender
    from sendledger.ports.webhooks import WebhookIntake
    from sendledger.settings import Settings


class NotCarried(LookupError):
    """A provider asked for a channel it does not carry."""


class SliceBase:
    name: str
    source: str
    channels: frozenset[Channel]

    def email_sender(self, settings: Settings) -> EmailSender:
        raise NotCarried(f"{self.name} carries no email")

    def sms_sender(self, settings: Settings) -> SmsSender:
        raise NotCarried(f"{self.name} carries no SMS")

    def lookup(self, settings: Settings) -> AcceptanceLookup | None:
        """No lookup API: absence of a timed-out send is proven by the source's watermark alone."""
        return None

    def lanes(self, settings: Settings, stores: LaneStores) -> list[EventLane]:
        return []

    def webhook(self, settings: Settings) -> tuple[WebhookIntake, str] | None:
        """Pull only: no webhook route."""
        return None

    def log_subscription(self, sink: EventSink) -> LogSubscription | None:
        """Its statuses are not written to CloudWatch Logs: no log subscription."""
        return None
