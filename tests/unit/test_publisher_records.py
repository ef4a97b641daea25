"""Stream records, in the shape Lambda delivers them (NEW_AND_OLD_IMAGES), read as status events."""

from __future__ import annotations

import json

from sendledger.adapters.dynamodb.expressions import encode_item
from sendledger.adapters.dynamodb.stream import LedgerStream
from sendledger.domain.state_changes import DetailType

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
