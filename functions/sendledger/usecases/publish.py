"""Publish: one stream record's status events onto the bus, and an `allow` send's label.

A record whose events cannot all be put raises, so the stream hands it (and the records
after it) back: a crash or a fault between commit and publish loses nothing, and since every
id is derived from the change, publishing a record again repeats the same ids. The same holds
for a label: one entry per message, under a key derived from its intent (written again:
nothing changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sendledger.domain.eligibility import RecordedSend
from sendledger.domain.messages import HistoryEntry, HistoryType
from sendledger.domain.state_changes import StatusEvent
from sendledger.ports.status_out import EligibilityLabels, StatusChangeSource, StatusEventBus


@dataclass
class PublishReport:
    records: int = 0
    published: list[StatusEvent] = field(default_factory=list)
    labelled: int = 0


def publish_record(
    record: dict[str, Any],
    changes: StatusChangeSource,
    bus: StatusEventBus,
    report: PublishReport,
    labels: EligibilityLabels,
) -> None:
    if label_recorded_send(record, labels):
        report.labelled += 1
    events: list[StatusEvent] = changes.events_of(record)
    if events:
        bus.put(events)
    report.records += 1
    report.published += events


def label_recorded_send(record: dict[str, Any], labels: EligibilityLabels) -> bool:
    """Label the `allow` send whose recipient update this record is (False: it is not one)."""
    recorded = labels.recorded_send(record)
    if recorded is None:
        return False
    labels.label(recorded.message_id, label_entry(recorded))
    return True


def label_entry(recorded: RecordedSend) -> HistoryEntry:
    """At the intent's time: the label is about the decision the intent made."""
    return HistoryEntry(at=recorded.sent_at, type=HistoryType.ELIGIBILITY, evidence=recorded.evidence())
