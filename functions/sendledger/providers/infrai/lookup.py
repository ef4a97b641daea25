"""The lookup before any retry of a timed-out Infrai send: `GET …/get/{id}`.

The message's Infrai id when it is known; else sendledger's message id, the Idempotency-Key it
was sent with (an assumption: assumptions.py). A record proves acceptance; 404 proves absence
only once the grace has passed (the caller waits UNKNOWN_GRACE_SECONDS); anything else proves
nothing.
"""

from __future__ import annotations

import json

from urllib3.exceptions import HTTPError as Urllib3Error

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import MalformedEvent
from sendledger.domain.messages import Message
from sendledger.ports.providers import Finding, LookupResult
from sendledger.providers.infrai.client import InfraiClient
from sendledger.providers.infrai.events import read_record

FAILED = LookupResult(Finding.FAILED)


class InfraiLookup:
    def __init__(self, client: InfraiClient) -> None:
        self.client = client

    def lookup(self, message: Message) -> LookupResult:
        key = message.provider_message_id or message.message_id
        try:
            answer = self.client.get(message.channel, key)
        except (Urllib3Error, DependencyUnavailable):
            return FAILED
        if answer.status == 404:
            return LookupResult(Finding.NOT_FOUND)
        if answer.status != 200:
            return FAILED
        try:
            record = read_record(json.loads(answer.body))
        except (ValueError, MalformedEvent):
            return FAILED
        return LookupResult(Finding.FOUND, provider_message_id=record.provider_message_id, status=record.status)
