"""Publish: one stream record's status events onto the bus.

A record whose events cannot all be put raises, so the stream hands it (and the records
after it) back: a crash or a fault between commit and publish loses nothing, and since every
id is derived from the change, publishing a record again repeats the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sendledger.domain.state_changes import StatusEvent
from sendledger.ports.status_out import StatusChangeSource, StatusEventBus


@dataclass
class PublishReport:
    records: int = 0
    published: list[StatusEvent] = field(default_factory=list)


def publish_record(
    record: dict[str, Any], changes: StatusChangeSource, bus: StatusEventBus, report: PublishReport
) -> None:
    events: list[StatusEvent] = changes.events_of(record)
    if events:
        bus.put(events)
    report.records += 1
    report.published += events
