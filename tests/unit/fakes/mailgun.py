"""Mailgun's Events API in memory: the local simulator's event log, answered as parsed pages."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from local.simulator.providers.mailgun import DEFAULT_DOMAIN, EventLog
from sendledger.providers.mailgun.events import EventsPage, parse_events_page
from tests.support.fakes import FakeClock

BASE = "https://api.mailgun.net"


class FakeMailgunEvents:
    def __init__(self, clock: FakeClock, page_limit: int = 300) -> None:
        self.log = EventLog(BASE, DEFAULT_DOMAIN, clock.now)
        self.page_limit = page_limit
        self.requests: list[dict[str, str] | str] = []

    def query(self, params: Mapping[str, str]) -> EventsPage:
        self.requests.append(dict(params))
        return parse_events_page(self.log.search({**params, "limit": str(self.page_limit)}))

    def follow(self, url: str) -> EventsPage:
        self.requests.append(url)
        return parse_events_page(self.log.follow(url.rsplit("/", 1)[1]))

    def add(
        self,
        event: str,
        message_id: str,
        recipient: str,
        at: datetime,
        visible_at: datetime | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        item = {
            "event": event,
            "id": secrets.token_urlsafe(12),
            "timestamp": at.timestamp(),
            "recipient": recipient,
            "user-variables": {"sendledger-message-id": message_id},
            "message": {"headers": {"message-id": f"{message_id}@{DEFAULT_DOMAIN}"}},
            **extra,
        }
        self.log.add(item, (visible_at or at).timestamp())
        return item
