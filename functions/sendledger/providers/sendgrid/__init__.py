"""SendGrid (email): v3 Mail Send; its events by the Signed Event Webhook (verified by the api,
queued to SQS, drained by the poller); the Email Activity API as the lookup of a timed-out send."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.provider import Provider, channels_of, source_of
from sendledger.providers.base import SliceBase

if TYPE_CHECKING:
    from collections.abc import Callable

    from sendledger.ports.providers import AcceptanceLookup, EmailSender, EventLane, Simulation
    from sendledger.ports.webhooks import WebhookIntake
    from sendledger.settings import Settings

NAME = Provider.SENDGRID.value
SOURCE = source_of(NAME)


class SendGrid(SliceBase):
    name, source, channels = NAME, SOURCE, channels_of(NAME)

    def email_sender(self, settings: Settings) -> EmailSender:
        from sendledger.providers.sendgrid.sender import SendGridEmailSender
        from sendledger.providers.sendgrid.settings import SendGridSettings

        fragment = settings.provider(SendGridSettings)
        return SendGridEmailSender(settings.sender_email, fragment.api_base, api_key(settings))

    def lookup(self, settings: Settings) -> AcceptanceLookup | None:
        from sendledger.providers.sendgrid.lookup import SendGridEmailActivity
        from sendledger.providers.sendgrid.settings import SendGridSettings

        fragment = settings.provider(SendGridSettings)
        return SendGridEmailActivity(fragment.api_base, api_key(settings)) if fragment.email_activity else None

    def lanes(self, settings: Settings) -> list[EventLane]:
        from sendledger.adapters.sqs import SqsEventQueue
        from sendledger.providers.sendgrid.events import parse_queued
        from sendledger.providers.sendgrid.settings import SendGridSettings
        from sendledger.usecases.queued_events import QueueLane

        url = settings.provider(SendGridSettings).events_queue_url
        return [QueueLane(NAME, SOURCE, SqsEventQueue(url), parse_queued)] if url else []

    def webhook(self, settings: Settings) -> tuple[WebhookIntake, str] | None:
        from sendledger.adapters.secrets import provider_secret
        from sendledger.providers.sendgrid.settings import SendGridSettings
        from sendledger.providers.sendgrid.signature import SendGridSignatureVerifier
        from sendledger.providers.sendgrid.webhook import SendGridIntake

        fragment = settings.provider(SendGridSettings)
        key, url = fragment.webhook_key_secret_arn, fragment.events_queue_url
        if not key or not url:
            return None
        verifier = SendGridSignatureVerifier(lambda: provider_secret(key))
        return SendGridIntake(verifier, fragment.webhook_max_age_seconds), url

    def simulation(self, settings: Settings) -> Simulation:
        from sendledger.providers.sendgrid.simulation import SendGridSimulation

        return SendGridSimulation()


def api_key(settings: Settings) -> Callable[[], str]:
    from sendledger.adapters.secrets import provider_secret
    from sendledger.providers.sendgrid.settings import ENV_API_KEY_SECRET_ARN, SendGridSettings
    from sendledger.settings import SettingsError

    secret = settings.provider(SendGridSettings).api_key_secret_arn
    if not secret:
        raise SettingsError(f"SendGrid needs {ENV_API_KEY_SECRET_ARN}")
    return lambda: provider_secret(secret)


SLICE = SendGrid()
