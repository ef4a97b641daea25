"""The providers that carry messages, and what they can be asked afterwards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from sendledger.domain.provider import ProviderResponse
from sendledger.domain.templates import Rendered
from sendledger.domain.values import value

if TYPE_CHECKING:  # only the poller reads pages; the api, which imports the senders, never loads them
    from sendledger.providers.mailgun.events import EventsPage


class EmailSender(Protocol):
    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse: ...


class SmsSender(Protocol):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse: ...


@value
class LookupResult:
    found: bool  # the provider has a message carrying our message id
    provider_message_id: str | None = None
    status: str | None = None


class AcceptanceLookup(Protocol):
    """A provider API that finds a send by sendledger's message id (after a timed-out call)."""

    def lookup(self, message_id: str) -> LookupResult | None:
        """None: the lookup itself failed (nothing is proven either way)."""


class ProviderEventsApi(Protocol):
    """A provider's pull-based event API (Mailgun's Events API): pages, ascending by time."""

    def query(self, params: Mapping[str, str]) -> EventsPage:
        """The first page of a search."""

    def follow(self, url: str) -> EventsPage:
        """The page a previous page's `next` URL names."""
