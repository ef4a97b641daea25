"""Per-caller settings (ledger items) and callback secrets (Secrets Manager), by caller id."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from sendledger.domain.caller_settings import CallerSettings, SettingsChangeEntry
from sendledger.domain.callers import CallerId

if TYPE_CHECKING:  # the send path loads this port; the signing domain is the callbacks Lambda's
    from sendledger.domain.callbacks import SigningKeys


class CallerSettingsStore(Protocol):
    def get(self, caller_id: CallerId) -> CallerSettings:
        """The caller's settings, through the container's cache (at most CALLER_SETTINGS_CACHE
        old); the defaults (no callback, test mode off) when the caller has no item."""
        ...

    def put(self, settings: CallerSettings, change: SettingsChangeEntry | None = None) -> CallerSettings:
        """Write them whole, with `change` added to their history in the same write; the stored
        settings (their `version` moved by one) come back and are what this container's next
        `get` answers."""
        ...


class CallbackSecrets(Protocol):
    """Each caller's callback secrets, one Secrets Manager secret per caller under a fixed prefix."""

    def keys(self, caller_id: CallerId) -> SigningKeys | None:
        """The caller's keys (None: it has no secret yet); a reader built with a cache age
        answers from its cache that long (the callbacks Lambda), the api's reads are fresh."""
        ...

    def put(self, caller_id: CallerId, keys: SigningKeys) -> None:
        """Create the caller's secret, or replace its value."""
        ...


class CallersInMemory:
    """No table: settings held by this object alone (tools and tests that build Services
    without a ledger). bootstrap wires the DynamoDB store."""

    def __init__(self) -> None:
        self._items: dict[CallerId, CallerSettings] = {}

    def get(self, caller_id: CallerId) -> CallerSettings:
        return self._items.get(caller_id) or CallerSettings(caller_id)

    def put(self, settings: CallerSettings, change: SettingsChangeEntry | None = None) -> CallerSettings:
        current = self.get(settings.caller_id)
        history = (*current.history, change) if change else current.history
        stored = replace(settings, version=current.version + 1, history=history)
        self._items[settings.caller_id] = stored
        return stored
