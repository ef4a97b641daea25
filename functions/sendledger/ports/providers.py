"""The provider port: what a provider slice (sendledger/providers/<name>/) gives the use cases.

A slice carries messages (an email or SMS sender), may find a timed-out send again (a lookup),
brings its events in (poll lanes the poller runs each cycle; a signed webhook intake the api
answers), and describes itself to the composition root. The use cases and bootstrap see only
this module and the registry (`Provider` in domain/provider.py): no provider's name.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from sendledger.domain.provider import ProviderResponse
from sendledger.domain.recipients import Channel
from sendledger.domain.templates import Rendered
from sendledger.domain.values import value

if TYPE_CHECKING:  # the api, which imports the senders, never loads the poller's modules
    from sendledger.domain.events import DeliveryEvent
    from sendledger.domain.messages import Message
    from sendledger.ports.webhooks import WebhookIntake
    from sendledger.settings import Settings
    from sendledger.usecases.ingest import Pipeline
    from sendledger.usecases.poll import CycleReport


class EmailSender(Protocol):
    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse: ...


class SmsSender(Protocol):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse: ...


class SimulatedCarriers(Protocol):
    """A test caller's carriers (providers/simulated/): never a provider's API; they answer as the
    simulator's rules say and report the outcome in the message's carrier's own event format."""

    def email_sender(self, message: Message) -> EmailSender: ...

    def sms_sender(self, message: Message) -> SmsSender: ...


@value
class SimulatedSend:
    """A test caller's send its simulated carrier accepted: what the carrier's events say of it."""

    channel: Channel
    message_id: str  # sendledger's
    provider_message_id: str  # the simulated, sealed id (domain/test_mode.py)
    to: str
    subject: str
    escalates: bool
    at: datetime  # accepted, and every event emitted, at this moment


class Simulation(Protocol):
    """A provider playing itself for a test caller (its slice knows its own event format)."""

    def events(self, send: SimulatedSend) -> list[str]:
        """What the provider reports for the accepted send, each event as its real path carries
        it (empty: it pushes nothing, or nothing ever comes for this address)."""

    def parse(self, body: str) -> list[DeliveryEvent]:
        """One of those bodies as ingestion reads it (MalformedEvent for anything else)."""


class Finding(StrEnum):
    FOUND = "found"  # the provider holds a message carrying our message id: it was accepted
    NOT_FOUND = "not_found"  # it holds none (absence, once the provider's index has had the grace to catch up)
    FAILED = "failed"  # the lookup itself failed: nothing is proven either way


@value
class LookupResult:
    finding: Finding
    provider_message_id: str | None = None
    status: str | None = None  # the provider's own word for the message's state, as evidence

    @property
    def found(self) -> bool:
        return self.finding is Finding.FOUND


class AcceptanceLookup(Protocol):
    """A provider API that finds a send again after its call timed out (run before any retry)."""

    def lookup(self, message: Message) -> LookupResult: ...


class EventLane(Protocol):
    """One way a provider's events reach the one apply routine, run once per poll cycle."""

    name: str  # the poll step's name in logs and errors
    source: str  # the event source whose watermark the lane moves
    # False: a side path beside the source's complete lane (a webhook queue, test outcomes): it
    # moves no watermark, so the cycle reads none for it either.
    completes_source: bool

    def run(
        self, pipeline: Pipeline, started: datetime, seconds_left: Callable[[], float], report: CycleReport
    ) -> datetime | None:
        """Apply what is there; the source's new watermark when everything before it is applied, else None."""


class ProviderSlice(Protocol):
    """A provider, as the composition root builds it (every builder imports its adapters lazily)."""

    name: str  # the registry's name, recorded on every message it carries
    source: str  # its event source: watermarks and event dedupe keys
    channels: frozenset[Channel]

    def email_sender(self, settings: Settings) -> EmailSender: ...

    def sms_sender(self, settings: Settings) -> SmsSender: ...

    def lookup(self, settings: Settings) -> AcceptanceLookup | None: ...

    def lanes(self, settings: Settings) -> list[EventLane]: ...

    def webhook(self, settings: Settings) -> tuple[WebhookIntake, str] | None:
        """A provider that pushes: its intake and the URL of the queue its events wait in
        (None: it does not push, or its webhook is not configured here)."""

    def simulation(self, settings: Settings) -> Simulation:
        """How it plays itself for a test caller's sends (providers/simulated/ carries them)."""
