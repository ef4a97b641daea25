"""Publish: one stream record's status events onto the bus, an `allow` send's label, an
accepted SMS's receipt, and the SMS segments the events bill.

A record whose events cannot all be put raises, so the stream hands it (and the records
after it) back: a crash or a fault between commit and publish loses nothing, and since every
id is derived from the change, publishing a record again repeats the same ids. The same holds
for a label: one entry per message, under a key derived from its intent (written again:
nothing changes), and for a receipt: one item per provider message id, merged.

An accepted SMS's receipt (SNS's message id to ours) is written here, not by the send's
outcome: the send stays at one UpdateItem for its outcome, as an email's, and the receipt's
write is billed off the API path (adapters/dynamodb/sms_receipts.py).

The daily SMS cap is counted here, off the send path: every SMS that enters `sending` (its
intent, or a resend) bills its segments to its owner's UTC day. The batch's counts are added
once per caller and day (usecases/sms_guard.py reads them); records after a failed one come
back with the retried batch, so they are counted then, not now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import parse_iso
from sendledger.domain.eligibility import RecordedSend
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_guardrails import utc_day
from sendledger.domain.state_changes import OWNER_FIELD, DetailType, StatusEvent
from sendledger.ports.status_out import EligibilityLabels, SmsReceipts, StatusChangeSource, StatusEventBus


@dataclass
class PublishReport:
    records: int = 0
    published: list[StatusEvent] = field(default_factory=list)
    labelled: int = 0
    receipts: int = 0  # accepted SMS's receipts written
    # Segments billed per (owner, UTC day) by the records published so far, in order.
    sms_segments: dict[tuple[CallerId, str], int] = field(default_factory=dict)
    counting: bool = True  # False after a record failed: the ones after it come back


def publish_record(
    record: dict[str, Any],
    changes: StatusChangeSource,
    bus: StatusEventBus,
    report: PublishReport,
    labels: EligibilityLabels,
    receipts: SmsReceipts,
) -> None:
    if label_recorded_send(record, labels):
        report.labelled += 1
    if write_sms_receipt(record, receipts):
        report.receipts += 1
    events: list[StatusEvent] = changes.events_of(record)
    if events:
        bus.put(events)
    report.records += 1
    report.published += events
    if report.counting:
        for event in events:
            billed = billed_segments(event)
            if billed is not None:
                pair = (billed[0], billed[1])
                report.sms_segments[pair] = report.sms_segments.get(pair, 0) + billed[2]


def label_recorded_send(record: dict[str, Any], labels: EligibilityLabels) -> bool:
    """Label the `allow` send whose recipient update this record is (False: it is not one)."""
    recorded = labels.recorded_send(record)
    if recorded is None:
        return False
    labels.label(recorded.message_id, label_entry(recorded))
    return True


def write_sms_receipt(record: dict[str, Any], receipts: SmsReceipts) -> bool:
    """Write the receipt of the SMS whose acceptance this record is (False: it is not one)."""
    accepted = receipts.accepted_of(record)
    if accepted is None:
        return False
    receipts.write(accepted)
    return True


def label_entry(recorded: RecordedSend) -> HistoryEntry:
    """At the intent's time: the label is about the decision the intent made."""
    return HistoryEntry(at=recorded.sent_at, type=HistoryType.ELIGIBILITY, evidence=recorded.evidence())


def billed_segments(event: StatusEvent) -> tuple[CallerId, str, int] | None:
    """(owner, UTC day, segments) of an SMS a provider is about to be asked to send: a real
    caller's message entering `sending` (a test caller's is simulated, never billed)."""
    detail = event.detail
    if event.detail_type is not DetailType.MESSAGE_STATE_CHANGED or detail.get("test"):
        return None
    if detail.get("channel") != Channel.SMS.value or detail.get("state") != MessageState.SENDING.value:
        return None
    owner, sms = detail.get(OWNER_FIELD), detail.get("sms")
    if not owner or not isinstance(sms, dict):
        return None
    return CallerId(owner), utc_day(parse_iso(detail["occurred_at"])), int(sms["segments"])
