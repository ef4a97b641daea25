"""A provider's lookup API over its outbox, with the lag of its search index.

SendGrid's Email Activity and Infrai's `get` find a send only once their index caught up with
it: until `lag` after it arrived, a send the provider holds answers "not found", as a send that
never arrived does. Why absence counts only after UNKNOWN_GRACE_SECONDS.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sendledger.domain.messages import Message
from sendledger.ports.providers import Finding, LookupResult
from tests.support.fakes import FakeClock
from tests.unit.fakes.senders import Call, ScriptedProvider


class LaggingIndex:
    def __init__(self, provider: ScriptedProvider, clock: FakeClock, lag_seconds: float) -> None:
        self.clock, self.lag = clock, timedelta(seconds=lag_seconds)
        self.indexed: list[tuple[str, datetime]] = []  # (message id, when the index shows it)
        self.asked: list[tuple[str, Finding]] = []
        provider.on_arrival = self._arrived

    def _arrived(self, call: Call) -> None:
        self.indexed.append((call.message_id, self.clock.now() + self.lag))

    def lookup(self, message: Message) -> LookupResult:
        now = self.clock.now()
        shown = [at for message_id, at in self.indexed if message_id == message.message_id and at <= now]
        found = LookupResult(Finding.FOUND, f"indexed-{message.message_id}", "delivered") if shown else None
        result = found or LookupResult(Finding.NOT_FOUND)
        self.asked.append((message.message_id, result.finding))
        return result
