"""Status out: committed changes read as events, the bus they go to, and signed callbacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sendledger.domain.state_changes import StatusEvent


class StatusChangeSource(Protocol):
    """The ledger's committed writes (stream records) read as status events."""

    def events_of(self, record: dict[str, Any]) -> list[StatusEvent]: ...


class StatusEventBus(Protocol):
    def put(self, events: Sequence[StatusEvent]) -> None:
        """All of them or DependencyUnavailable; putting one again is harmless (same event_id)."""
        ...


class CallbackEndpoint(Protocol):
    def post(self, url: str, body: bytes, headers: dict[str, str], timeout_seconds: float) -> int | None:
        """The HTTP status, or None when there was no answer (timeout, refused, reset)."""
        ...


class CallbackRetries(Protocol):
    def retry_in(self, receipt_handle: str, seconds: int) -> None:
        """Make the queued callback visible again after `seconds` (its next attempt)."""
        ...
