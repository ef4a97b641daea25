"""Mailgun (email): `POST /v3/{domain}/messages`; its events pulled from the Events API by the
poller from a cursor, by Mailgun's finality rule (lane.py), unknown sends searched for there
(search.py); signed webhooks as a faster path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.providers.base import EMAIL, SliceBase

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.ports.providers import EmailSender, EventLane
    from sendledger.settings import Settings

NAME = "mailgun"
SOURCE = "mailgun"


class Mailgun(SliceBase):
    name, source, channels = NAME, SOURCE, EMAIL

    def email_sender(self, settings: Settings) -> EmailSender:
        from sendledger.providers.mailgun.http import secret_value
        from sendledger.providers.mailgun.sender import MailgunEmailSender
        from sendledger.providers.mailgun.settings import MailgunSettings

        fragment = settings.provider(MailgunSettings)
        key = secret_value(fragment.api_key_secret_arn)
        return MailgunEmailSender(fragment.api_base, fragment.domain, settings.sender_email, key)

    def lanes(self, settings: Settings, ledger: LedgerTable) -> list[EventLane]:
        from sendledger.providers.mailgun.events_api import MailgunEventsApi
        from sendledger.providers.mailgun.http import secret_value
        from sendledger.providers.mailgun.lane import EventsLane
        from sendledger.providers.mailgun.settings import MailgunSettings

        fragment = settings.provider(MailgunSettings)
        api = MailgunEventsApi(fragment.api_base, fragment.domain, secret_value(fragment.api_key_secret_arn))
        return [EventsLane(api)]


SLICE = Mailgun()
