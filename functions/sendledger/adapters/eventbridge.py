"""EventBridge: status events onto the sendledger bus (PutEvents, at most 10 entries a call)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sendledger.adapters import sdk
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.state_changes import SOURCE, StatusEvent

# Publishing again is harmless (receivers dedupe by event_id): SDK standard retries.
BUS_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES)
_MAX_ENTRIES = 10


def entry(event: StatusEvent, bus_name: str) -> dict[str, Any]:
    return {
        "Source": SOURCE,
        "DetailType": event.detail_type.value,
        "Detail": json.dumps(event.detail, separators=(",", ":"), sort_keys=True),
        "Time": event.occurred_at,
        "EventBusName": bus_name,
    }


class EventBridgeBus:
    def __init__(self, bus_name: str, client: Any = None) -> None:
        self.bus_name = bus_name
        self.client = client or sdk.client("events", BUS_CONFIG)

    def put(self, events: Sequence[StatusEvent]) -> None:
        """All of them, or DependencyUnavailable (the stream record is then retried whole)."""
        for start in range(0, len(events), _MAX_ENTRIES):
            chunk = events[start : start + _MAX_ENTRIES]
            response = self.client.put_events(Entries=[entry(event, self.bus_name) for event in chunk])
            if response.get("FailedEntryCount"):
                codes = sorted({e.get("ErrorCode", "?") for e in response.get("Entries", []) if "ErrorCode" in e})
                raise DependencyUnavailable(f"PutEvents failed for {response['FailedEntryCount']} entries: {codes}")
