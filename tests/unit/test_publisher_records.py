"""Stream records, in the shape Lambda delivers them (NEW_AND_OLD_IMAGES), read as status events."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sendledger.adapters.dynamodb.expressions import encode_item
from sendledger.adapters.dynamodb.labels import StalenessLabels
from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
from sendledger.adapters.dynamodb.stream import LedgerStream
from sendledger.domain.eligibility import Eligibility, RecordedSend
from sendledger.domain.state_changes import DetailType
from sendledger.ports.status_out import AcceptedSms

MID = "msg_01TEST"
MESSAGE = {
    "pk": f"MSG#{MID}", "sk": "MSG", "message_id": MID, "channel": "email", "recipient": "ann@example.com",
    "recipient_key": "email:ann@example.com", "template_id": "alert", "template_version": "1",
    "category": "alert", "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
    "state": "sending", "h:1767225600000.00.AAAAAAAAAAAA": json.dumps({"type": "intent"}),
}  # fmt: skip


STREAM_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/sendledger-ledger/stream/2026-01-01T00:00:00.000"


class OneItemTable:
    def __init__(self, item):
        self.item, self.reads = item, 0

    def get(self, pk, sk):
        self.reads += 1
        return self.item if (pk, sk) == (self.item["pk"]["S"], self.item["sk"]["S"]) else None


def record(name, pk, sk, old=None, new=None, sequence="100"):
    change = {
        "ApproximateCreationDateTime": 1767225600,
        "Keys": {"pk": {"S": pk}, "sk": {"S": sk}},
        "SequenceNumber": sequence,
        "SizeBytes": 512,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if old is not None:
        change["OldImage"] = encode_item(old)
    if new is not None:
        change["NewImage"] = encode_item(new)
    return {
        "eventID": "1",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": change,
        "eventSourceARN": STREAM_ARN,
    }


def accepted():
    return {
        **MESSAGE, "state": "accepted", "updated_at": "2026-01-01T00:00:01.000Z", "provider_message_id": "ses-1",
        "h:1767225601000.01.BBBBBBBBBBBB": json.dumps({"type": "provider_outcome"}),
    }  # fmt: skip


def stream(item=None):
    return LedgerStream(OneItemTable(encode_item(item or accepted())))


def test_an_intent_and_its_outcome_are_two_changes_with_the_outcomes_time():
    events = stream().events_of(record("INSERT", f"MSG#{MID}", "MSG", new=MESSAGE))
    events += stream().events_of(record("MODIFY", f"MSG#{MID}", "MSG", old=MESSAGE, new=accepted()))
    assert [(e.detail["previous_state"], e.detail["state"]) for e in events] == [
        (None, "sending"),
        ("sending", "accepted"),
    ]
    outcome = events[1]
    assert outcome.detail_type is DetailType.MESSAGE_STATE_CHANGED
    assert outcome.detail["occurred_at"] == "2026-01-01T00:00:01.000Z"
    assert outcome.detail["provider_message_id"] == "ses-1" and outcome.detail["to"] == "ann@example.com"


def test_a_write_that_leaves_the_state_alone_publishes_nothing():
    touched = {**accepted(), "due_kind": "outcome#3"}
    assert stream().events_of(record("MODIFY", f"MSG#{MID}", "MSG", old=accepted(), new=touched)) == []
    assert stream().events_of(record("REMOVE", f"MSG#{MID}", "MSG", old=accepted())) == []


def test_a_receipt_that_moves_the_state_names_the_message_and_the_state_it_left():
    receipt = {"pk": f"MSG#{MID}", "sk": "RCPT", "state": "bounced", "reason": "5.1.1 unknown user",
               "updated_at": "2026-01-01T00:00:05.000Z", "provider_message_id": "ses-1"}  # fmt: skip
    source = stream()
    (event,) = source.events_of(record("INSERT", f"MSG#{MID}", "RCPT", new=receipt))
    assert (event.detail["previous_state"], event.detail["state"]) == ("accepted", "bounced")
    assert event.detail["reason"] == "5.1.1 unknown user" and event.detail["category"] == "alert"
    assert event.detail["occurred_at"] == "2026-01-01T00:00:05.000Z"


def test_one_state_seen_on_the_receipt_and_on_the_message_item_is_one_event_id():
    # An SES Send event landed on the receipt while the outcome write was still in flight.
    receipt = {"pk": f"MSG#{MID}", "sk": "RCPT", "state": "accepted", "updated_at": "2026-01-01T00:00:00.500Z"}
    (early,) = stream(MESSAGE).events_of(record("INSERT", f"MSG#{MID}", "RCPT", new=receipt))
    (outcome,) = stream().events_of(record("MODIFY", f"MSG#{MID}", "MSG", old=MESSAGE, new=accepted()))
    assert early.event_id == outcome.event_id
    # Once the message item holds the state itself, its own record is the one that publishes.
    assert stream().events_of(record("INSERT", f"MSG#{MID}", "RCPT", new=receipt, sequence="101")) == []


def test_a_state_entered_again_by_a_retry_is_a_new_event():
    retry = {**MESSAGE, "state": "retry", "h:1767225700000.00.CCCCCCCCCCCC": "{}"}
    again = {**retry, "state": "sending", "h:1767225800000.00.DDDDDDDDDDDD": "{}"}
    first = stream().events_of(record("INSERT", f"MSG#{MID}", "MSG", new=MESSAGE))[0]
    resend = stream().events_of(record("MODIFY", f"MSG#{MID}", "MSG", old=retry, new=again))[0]
    assert first.detail["state"] == resend.detail["state"] == "sending"
    assert first.event_id != resend.event_id


def test_the_recipient_item_publishes_only_a_version_change():
    base = {"pk": "SUP#email:ann@example.com", "sk": "STATE", "last_send_at": "2026-01-01T00:00:00.000Z"}
    marker = {**base, "last_send_at": "2026-01-01T00:01:00.000Z"}
    suppressed = {**marker, "suppressed": True, "version": 1, "reason": "bounce", "since": "2026-01-01T00:02:00.000Z",
                  "source_event": "ses-1#Bounce#x"}  # fmt: skip
    source = stream()
    assert source.events_of(record("MODIFY", base["pk"], "STATE", old=base, new=marker)) == []
    (event,) = source.events_of(record("MODIFY", base["pk"], "STATE", old=marker, new=suppressed))
    assert event.detail_type is DetailType.SUPPRESSION_CHANGED
    assert {k: event.detail[k] for k in ("recipient", "suppressed", "reason", "version", "actor", "occurred_at")} == {
        "recipient": "ann@example.com", "suppressed": True, "reason": "bounce", "version": 1,
        "actor": "sendledger-events", "occurred_at": "2026-01-01T00:02:00.000Z",
    }  # fmt: skip


SENT = {"pk": "SUP#email:ann@example.com", "sk": "STATE", "last_send_at": "2026-01-01T00:00:00.000Z",
        "last_message_id": "msg_FIRST"}  # fmt: skip


def recipient_record(old, new, **nulls):
    """A recipient change; `nulls` are attributes the write set to NULL (encode_item leaves None out)."""
    change = record("MODIFY", SENT["pk"], "STATE", old=old, new=new)
    change["dynamodb"]["NewImage"].update({name: {"NULL": True} for name in nulls})
    return change


def test_an_allow_sends_recipient_update_is_read_as_the_send_it_replaced_and_its_cutoff():
    again = {**SENT, "last_send_at": "2026-01-01T00:00:10.000Z", "last_message_id": MID,
             "prev_send_at": SENT["last_send_at"], "prev_message_id": "msg_FIRST",
             "stale_after": "2025-12-31T23:45:00.000Z"}  # fmt: skip
    recorded = StalenessLabels(OneItemTable(encode_item(accepted()))).recorded_send(recipient_record(SENT, again))
    assert recorded == RecordedSend(
        message_id=MID,
        sent_at=datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC),
        previous_send_at=datetime(2026, 1, 1, tzinfo=UTC),
        previous_message_id="msg_FIRST",
        stale_after=datetime(2025, 12, 31, 23, 45, tzinfo=UTC),
    )
    assert recorded.label() is Eligibility.ELIGIBLE_STALE
    assert recorded.evidence() == {"eligibility": "eligible_stale", "previous_send_age_seconds": 10.0}


def test_a_first_send_with_no_watermark_read_is_eligible():
    first = {"pk": SENT["pk"], "sk": "STATE", "last_send_at": SENT["last_send_at"], "last_message_id": "msg_FIRST"}
    change = recipient_record({}, first, prev_send_at=None, prev_message_id=None, stale_after=None)
    recorded = StalenessLabels(OneItemTable(encode_item(accepted()))).recorded_send(change)
    assert recorded is not None and recorded.previous_send_at is None and recorded.stale_after is None
    assert recorded.evidence() == {"eligibility": "eligible"}


def test_only_a_write_that_moved_the_marker_with_recorded_inputs_is_labelled():
    labels = StalenessLabels(OneItemTable(encode_item(accepted())))
    recorded = {**SENT, "prev_send_at": "2025-12-31T00:00:00.000Z", "prev_message_id": "msg_0",
                "stale_after": "2025-12-31T23:45:00.000Z"}  # fmt: skip
    bounced = {**recorded, "suppressed": True, "version": 1}  # an event's write keeps the last send's inputs
    deferred = {**SENT, "last_send_at": "2026-01-01T00:01:00.000Z", "last_message_id": MID}  # decided at its intent
    assert labels.recorded_send(recipient_record(recorded, bounced)) is None
    assert labels.recorded_send(recipient_record(recorded, deferred)) is None
    assert labels.recorded_send(record("MODIFY", f"MSG#{MID}", "MSG", old=MESSAGE, new=accepted())) is None


def test_only_the_change_that_named_an_sms_provider_id_is_read_as_its_acceptance():
    receipts = SmsReceiptItems(OneItemTable(encode_item(accepted())))
    queued = {**MESSAGE, "channel": "sms", "recipient": "+12065550100", "escalation": '{"deadline_seconds":60}'}
    sent = {**queued, "state": "accepted", "provider_message_id": "sns-1"}
    delivered = {**sent, "state": "delivered"}  # a later change of the same message: the id is not new
    outcome = record("MODIFY", f"MSG#{MID}", "MSG", old=queued, new=sent)
    assert receipts.accepted_of(outcome) == AcceptedSms(MID, "sns-1", escalates=True)
    assert receipts.accepted_of(record("MODIFY", f"MSG#{MID}", "MSG", old=sent, new=delivered)) is None
    assert receipts.accepted_of(record("MODIFY", f"MSG#{MID}", "MSG", old=MESSAGE, new=accepted())) is None  # email
    assert receipts.accepted_of(record("REMOVE", f"MSG#{MID}", "MSG", old=sent)) is None
    assert receipts.accepted_of(record("MODIFY", "PMID#sns-1", "PMID", old={}, new={"message_id": MID})) is None
