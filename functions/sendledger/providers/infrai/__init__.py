"""Infrai (email and SMS): `POST {base}/email/send` (and, assumed, `/sms/send`) with a Bearer key
and sendledger's message id as the Idempotency-Key; no webhooks: a poll lane asks for the status
of each message still in flight (lane.py), `GET {base}/email/get/{id}` is the lookup before any
retry (lookup.py). What the design note does not document is one table: assumptions.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.provider import Provider, channels_of, source_of
from sendledger.domain.recipients import Channel
from sendledger.providers.base import SliceBase

if TYPE_CHECKING:
    from sendledger.ports.providers import AcceptanceLookup, EmailSender, EventLane, Simulation, SmsSender
    from sendledger.providers.infrai.client import InfraiClient
    from sendledger.settings import Settings

NAME = Provider.INFRAI.value
SOURCE = source_of(NAME)


class Infrai(SliceBase):
    name, source, channels = NAME, SOURCE, channels_of(NAME)

    def email_sender(self, settings: Settings) -> EmailSender:
        from sendledger.providers.infrai.sender import InfraiSender

        return InfraiSender(api_client(settings), Channel.EMAIL)

    def sms_sender(self, settings: Settings) -> SmsSender:
        from sendledger.providers.infrai.sender import InfraiSender

        return InfraiSender(api_client(settings), Channel.SMS)

    def lookup(self, settings: Settings) -> AcceptanceLookup | None:
        from sendledger.providers.infrai.lookup import InfraiLookup

        return InfraiLookup(api_client(settings))

    def lanes(self, settings: Settings) -> list[EventLane]:
        from sendledger.providers.infrai.lane import StatusLane

        return [StatusLane(api_client(settings))]

    def simulation(self, settings: Settings) -> Simulation:
        from sendledger.providers.infrai.simulation import InfraiSimulation

        return InfraiSimulation()  # pushes nothing: its status lane answers a test message from the rules


def api_client(settings: Settings) -> InfraiClient:
    from sendledger.adapters.secrets import provider_secret
    from sendledger.providers.infrai.client import InfraiClient
    from sendledger.providers.infrai.settings import ENV_API_KEY_SECRET_ARN, InfraiSettings
    from sendledger.settings import SettingsError

    fragment = settings.provider(InfraiSettings)
    secret = fragment.api_key_secret_arn
    if not secret:
        raise SettingsError(f"Infrai needs {ENV_API_KEY_SECRET_ARN}")
    return InfraiClient(fragment.api_base, lambda: provider_secret(secret))


SLICE = Infrai()
