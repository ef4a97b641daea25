"""Provider worlds: one email provider wired end to end, for the contract suite to run against.

A world is the real api and poller over moto, with the provider's adapter talking to the local
simulator and the provider's events reaching sendledger by that provider's own path. Register a
provider by adding a builder to WORLDS; every test in tests/providers that takes the `world`
fixture then runs against it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import boto3

from local.simulator import Simulator
from local.simulator.http import InProcessHttp
from local.simulator.providers.mailgun import DEFAULT_DOMAIN, LOCAL_API_KEY, LOCAL_SIGNING_KEY, MailgunSimulator
from local.simulator.providers.sendgrid import side_of
from sendledger import names
from sendledger.adapters.secrets import provider_secret
from sendledger.bootstrap import Runtime, slice_of
from sendledger.domain.provider import Provider
from sendledger.domain.recipients import Channel
from sendledger.ports.providers import EventLane, LaneStores
from sendledger.providers.http import Http
from sendledger.providers.mailgun.lane import EventsLane
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.sendgrid.lookup import SendGridEmailActivity
from sendledger.providers.sendgrid.sender import SendGridEmailSender
from sendledger.providers.sendgrid.settings import SendGridSettings
from sendledger.providers.simulated.outcomes import SOURCE as TEST_MODE_SOURCE
from sendledger.settings import Settings
from sendledger.usecases.poll import CycleReport
from tests.conftest import Api
from tests.integration.conftest import Ingestion
from tests.support.fakes import FakeClock

Wrap = Callable[[Http], Http]  # what stands between an adapter and the simulated API (a fault injector)


def unwrapped(http: Http) -> Http:
    return http


@dataclass
class Parts:
    """What every world shares: moto's services, the api, SES/SNS ingestion, the simulator, the clock."""

    services: Runtime
    api: Api
    ingestion: Ingestion
    simulator: Simulator
    clock: FakeClock


class ProviderWorld(Protocol):
    provider: Provider
    parts: Parts

    def emit(self) -> None:
        """The provider's events for everything sent so far reach sendledger by the provider's path."""

    def outbox(self) -> list[dict[str, Any]]:
        """Every email this provider accepted (the simulator's outbox entries), oldest first."""


@dataclass
class SesWorld:
    provider: Provider
    parts: Parts

    def emit(self) -> None:
        self.parts.simulator.flush()  # SES records → SNS → the SES events queue

    def outbox(self) -> list[dict[str, Any]]:
        return [entry for entry in self.parts.simulator.outbox() if entry["provider"] == "ses"]


def ses_world(parts: Parts) -> ProviderWorld:
    return SesWorld(Provider.SES, parts)


@dataclass
class MailgunWorld:
    provider: Provider
    parts: Parts
    mailgun: MailgunSimulator

    def emit(self) -> None:
        """Nothing to push: the poller pulls Mailgun's Events API (served by the simulator)."""

    def outbox(self) -> list[dict[str, Any]]:
        return self.mailgun.outbox()

    def close(self) -> None:
        self.mailgun.stop()


def mailgun_world(parts: Parts, *, wrap: Wrap = unwrapped, webhooks: bool = False) -> MailgunWorld:
    """The Mailgun adapters, built from settings, against the simulator over HTTP; with `webhooks`,
    its signing key and events queue too (the signed webhook route and its queue lane)."""
    from sendledger import bootstrap
    from sendledger.providers.http import Urllib3Http
    from sendledger.providers.mailgun.sender import MailgunEmailSender

    mailgun = MailgunSimulator(clock=parts.clock.now)
    url = mailgun.serve()
    secrets = boto3.client("secretsmanager")
    secret = secrets.create_secret(Name="sendledger/mailgun-api-key", SecretString=LOCAL_API_KEY)
    hooks: dict[str, Any] = {}
    if webhooks:
        signing = secrets.create_secret(Name="sendledger/mailgun-signing-key", SecretString=LOCAL_SIGNING_KEY)
        queue = boto3.client("sqs").create_queue(QueueName=MAILGUN_EVENTS_QUEUE, Attributes={"VisibilityTimeout": "0"})
        hooks = {"signing_key_secret_arn": signing["ARN"], "events_queue_url": queue["QueueUrl"]}
    parts.services.settings = parts.services.settings.configure_provider(
        MailgunSettings,
        api_base=url,
        domain=DEFAULT_DOMAIN,
        api_key_secret_arn=secret["ARN"],
        events_final_after_seconds=MAILGUN_FINAL_AFTER_SECONDS,
        **hooks,
    )
    settings = parts.services.settings
    if wrap is unwrapped:
        parts.services.email = bootstrap.email_sender(settings)
    else:
        from sendledger.providers.mailgun.http import secret_value

        fragment, key = settings.provider(MailgunSettings), secret_value(secret["ARN"])
        http = wrap(Urllib3Http())
        parts.services.email = MailgunEmailSender(fragment.api_base, fragment.domain, settings.sender_email, key, http)
    # The SES queue lane gives way to the Events API lane (and the webhook lane; the SMS log lane and
    # test mode's lane stay).
    runtime, others = parts.ingestion.services, parts.ingestion.services.lanes_for

    def lanes_for(settings: Settings, stores: LaneStores) -> list[EventLane]:
        lanes = slice_of(Provider.MAILGUN.value).lanes(settings, stores)
        assert isinstance(lanes[-1], EventsLane) and len(lanes) == (2 if webhooks else 1)
        return [*lanes, *(lane for lane in others(settings, stores) if lane.source in ("sms", TEST_MODE_SOURCE))]

    runtime.lanes_for = lanes_for
    return MailgunWorld(Provider.MAILGUN, parts, mailgun)


MAILGUN_FINAL_AFTER_SECONDS = 10
MAILGUN_EVENTS_QUEUE = "sendledger-mailgun-events"


@dataclass
class SendGridWorld:
    provider: Provider
    parts: Parts
    http: InProcessHttp  # the adapter's transport: SendGrid's API played by the simulator
    queue_url: str  # the webhook's events queue

    def emit(self) -> None:
        side_of(self.parts.simulator).flush(self.post)  # signed webhook batch → api → events queue

    def post(self, body: bytes, headers: dict[str, str]) -> int:
        status, _, _ = self.parts.api("POST", names.webhook_path("sendgrid"), raw_body=body.decode(), headers=headers)
        return status

    def outbox(self) -> list[dict[str, Any]]:
        return [entry for entry in self.parts.simulator.outbox() if entry["provider"] == "sendgrid"]


def sendgrid_world(parts: Parts, *, email_activity: bool = False, wrap: Wrap = unwrapped) -> SendGridWorld:
    """SendGrid's key and the webhook's verification key in Secrets Manager, its events queue, its adapter."""
    sqs, secrets = boto3.client("sqs"), boto3.client("secretsmanager")
    side = side_of(parts.simulator)
    api_key = secrets.create_secret(Name="sendledger/sendgrid-api-key", SecretString=side.api_key)["ARN"]
    public_key = secrets.create_secret(Name="sendledger/sendgrid-webhook-key", SecretString=side.public_key)["ARN"]
    queue_url = sqs.create_queue(QueueName="sendledger-sendgrid-events", Attributes={"VisibilityTimeout": "0"})[
        "QueueUrl"
    ]
    services = parts.services
    services.settings = services.settings.replace({"email_provider": Provider.SENDGRID})
    services.settings = services.settings.configure_provider(
        SendGridSettings,
        api_key_secret_arn=api_key,
        webhook_key_secret_arn=public_key,
        events_queue_url=queue_url,
        email_activity=email_activity,
    )
    http = InProcessHttp(side.handle)
    fragment = services.settings.provider(SendGridSettings)
    services.email = SendGridEmailSender(
        services.settings.sender_email,
        fragment.api_base,
        lambda: provider_secret(api_key),
        http=wrap(http),
        now=lambda: parts.clock.now().timestamp(),
    )
    if email_activity:
        lookup = SendGridEmailActivity(fragment.api_base, lambda: provider_secret(api_key), http)
        services.lookups[Provider.SENDGRID.value] = lookup
    return SendGridWorld(Provider.SENDGRID, parts, http, queue_url)


@dataclass
class InfraiWorld:
    provider: Provider
    parts: Parts
    http: InProcessHttp  # Infrai's API played by the simulator

    def emit(self) -> None:
        """Nothing is pushed: the poller asks for each message's status."""

    def outbox(self) -> list[dict[str, Any]]:
        return [entry for entry in self.parts.simulator.outbox() if entry["provider"] == "infrai"]


def infrai_world(parts: Parts, *, wrap: Wrap = unwrapped) -> InfraiWorld:
    """Infrai's key in Secrets Manager, its sender, lookup and status lane over the simulated API."""
    from local.simulator.providers.infrai import side_of as infrai_side
    from sendledger.providers.infrai.client import InfraiClient
    from sendledger.providers.infrai.lane import status_lane
    from sendledger.providers.infrai.lookup import InfraiLookup
    from sendledger.providers.infrai.sender import InfraiSender
    from sendledger.providers.infrai.settings import InfraiSettings

    side = infrai_side(parts.simulator)
    secret = boto3.client("secretsmanager").create_secret(Name="sendledger/infrai-api-key", SecretString=side.api_key)
    services = parts.services
    services.settings = services.settings.replace({"email_provider": Provider.INFRAI})
    services.settings = services.settings.configure_provider(
        InfraiSettings, api_base="https://infrai.simulator.invalid/v1", api_key_secret_arn=secret["ARN"],
        status_interval_seconds=INFRAI_STATUS_INTERVAL_SECONDS,
        complaint_first_read_seconds=INFRAI_STATUS_INTERVAL_SECONDS,
    )  # fmt: skip
    http = InProcessHttp(side.handle)
    fragment = services.settings.provider(InfraiSettings)
    client = InfraiClient(fragment.api_base, lambda: provider_secret(secret["ARN"]), wrap(http))
    services.email = InfraiSender(client, Channel.EMAIL)
    others = services.lanes_for

    def lanes_for(settings: Settings, stores: LaneStores) -> list[EventLane]:
        sms = [lane for lane in others(settings, stores) if lane.source == "sms"]
        return [status_lane(settings, stores, client), *sms]

    services.lanes_for = lanes_for
    services.lookups[Provider.INFRAI.value] = InfraiLookup(client)
    return InfraiWorld(Provider.INFRAI, parts, http)


INFRAI_STATUS_INTERVAL_SECONDS = 1  # the in-flight pull interval and the first complaint read

WORLDS: dict[Provider, Callable[[Parts], ProviderWorld]] = {
    Provider.SES: ses_world,
    Provider.SENDGRID: sendgrid_world,
    Provider.MAILGUN: mailgun_world,
    Provider.INFRAI: infrai_world,
}


def poll(world: ProviderWorld) -> CycleReport:
    """Emit the provider's events, then run one poll cycle."""
    world.emit()
    return world.parts.ingestion.poll()
