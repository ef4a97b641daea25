"""Mailgun (email): `POST /v3/{domain}/messages`; its events pulled from the Events API by the
poller from a cursor, by Mailgun's finality rule (lane.py), unknown sends searched for there
(search.py); signed webhooks (webhook.py) as a faster path, queued like every provider's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.provider import Provider, channels_of, source_of
from sendledger.providers.base import SliceBase

if TYPE_CHECKING:
    from sendledger.ports.providers import EmailSender, EventLane, Simulation
    from sendledger.ports.webhooks import WebhookIntake
    from sendledger.settings import Settings

NAME = Provider.MAILGUN.value
SOURCE = source_of(NAME)


class Mailgun(SliceBase):
    name, source, channels = NAME, SOURCE, channels_of(NAME)

    def email_sender(self, settings: Settings) -> EmailSender:
        from sendledger.providers.mailgun.http import secret_value
        from sendledger.providers.mailgun.sender import MailgunEmailSender
        from sendledger.providers.mailgun.settings import MailgunSettings

        fragment = settings.provider(MailgunSettings)
        key = secret_value(fragment.api_key_secret_arn)
        return MailgunEmailSender(fragment.api_base, fragment.domain, settings.sender_email, key)

    def lanes(self, settings: Settings) -> list[EventLane]:
        from sendledger.adapters.sqs import SqsEventQueue
        from sendledger.providers.mailgun.events import parse_queued
        from sendledger.providers.mailgun.events_api import MailgunEventsApi
        from sendledger.providers.mailgun.http import secret_value
        from sendledger.providers.mailgun.lane import EventsLane
        from sendledger.providers.mailgun.settings import MailgunSettings
        from sendledger.usecases.queued_events import QueueLane

        fragment = settings.provider(MailgunSettings)
        api = MailgunEventsApi(fragment.api_base, fragment.domain, secret_value(fragment.api_key_secret_arn))
        lanes: list[EventLane] = []
        if fragment.events_queue_url:
            # Webhooks are the faster path only: draining their queue proves nothing about the
            # Events API, whose finality alone moves the watermark.
            queue = SqsEventQueue(fragment.events_queue_url)
            lanes.append(QueueLane(f"{NAME}-webhooks", SOURCE, queue, parse_queued, completes_source=False))
        return [*lanes, EventsLane(api)]

    def webhook(self, settings: Settings) -> tuple[WebhookIntake, str] | None:
        from sendledger.providers.mailgun.http import secret_value
        from sendledger.providers.mailgun.settings import MailgunSettings
        from sendledger.providers.mailgun.webhook import MailgunIntake

        fragment = settings.provider(MailgunSettings)
        if not fragment.signing_key_secret_arn or not fragment.events_queue_url:
            return None
        key = secret_value(fragment.signing_key_secret_arn)
        return MailgunIntake(key, fragment.webhook_max_age_seconds), fragment.events_queue_url

    def simulation(self, settings: Settings) -> Simulation:
        from sendledger.providers.mailgun.simulation import MailgunSimulation

        return MailgunSimulation(settings.sender_email)


SLICE = Mailgun()
