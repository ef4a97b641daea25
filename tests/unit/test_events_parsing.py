"""Parsers and rules against the AWS-documented samples (tests/fixtures/aws-formats)."""

import json
from datetime import UTC, datetime, timedelta
from email.utils import parseaddr

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sendledger.domain.events import EventKind, MalformedEvent
from sendledger.domain.messages import MessageState
from sendledger.domain.outcomes import allowed_from, target_state
from sendledger.domain.suppression_rules import Action, TransientPolicy, verdict_for
from sendledger.ports.log_subscription import LogRecord
from sendledger.providers.ses.events import address_of, parse_ses_record, parse_sqs_body
from sendledger.providers.ses.events import classify_bounce as classify_ses_bounce
from sendledger.providers.sns.events import classify_failure as classify_sms_failure
from sendledger.providers.sns.events import (
    decode_subscription_event,
    encode_subscription_event,
    parse_sms_record,
)
from sendledger.providers.sns.lane import LOG_OVERLAP_MS, advance_cursor
from tests.support.fixtures import AWS_FORMATS, aws_format

OUR_ID = "msg_01JEXAMPLE0000000000000000"
SES_ID = "0100018c2e5c0a3b-EXAMPLE-7c19-4d12-a87d-dd0099a07f8a-000000"


def load(name):
    return aws_format(name)


@pytest.mark.parametrize(
    ("name", "kind", "target"),
    [
        ("ses-send.json", EventKind.SEND, MessageState.ACCEPTED),
        ("ses-delivery.json", EventKind.DELIVERY, MessageState.DELIVERED),
        ("ses-bounce-permanent.json", EventKind.BOUNCE, MessageState.BOUNCED),
        ("ses-bounce-transient.json", EventKind.BOUNCE, MessageState.BOUNCED),
        ("ses-complaint.json", EventKind.COMPLAINT, MessageState.COMPLAINED),
        ("ses-reject.json", EventKind.REJECT, MessageState.REJECTED),
        ("ses-delivery-delay.json", EventKind.DELIVERY_DELAY, MessageState.ACCEPTED),
    ],
)
def test_every_ses_fixture_parses(name, kind, target):
    [event] = parse_ses_record(load(name))
    assert event.source == "ses" and event.kind is kind
    assert event.message_id == OUR_ID and event.provider_message_id == SES_ID
    assert event.recipient_key == "email:recipient@example.com"
    assert event.occurred_at.tzinfo is not None
    assert target_state(event) is target
    # No raw address in the dedupe id or the evidence
    assert "recipient@example.com" not in event.event_id + json.dumps(event.evidence)
    assert event.event_id.startswith(f"{SES_ID}#{kind.value}#")


def test_event_ids_distinguish_feedback_and_kind():
    permanent = parse_ses_record(load("ses-bounce-permanent.json"))[0]
    transient = parse_ses_record(load("ses-bounce-transient.json"))[0]
    delivery = parse_ses_record(load("ses-delivery.json"))[0]
    assert len({permanent.event_id, transient.event_id, delivery.event_id}) == 3
    assert permanent.event_id.endswith("#0100018c2e5c1f00-EXAMPLE-bounce-000000")
    assert permanent.bounce_type == "Permanent" and permanent.bounce_subtype == "General"
    assert permanent.provider_response == "5.1.1"
    assert permanent.occurred_at == datetime(2026, 11, 29, 10, 0, 2, 669000, tzinfo=UTC)


def test_sns_envelope_in_sqs_body():
    body = (AWS_FORMATS / "sqs-body-sns-envelope-ses-bounce.json").read_text()
    [event] = parse_sqs_body(body)
    assert event.kind is EventKind.BOUNCE and event.message_id == OUR_ID
    # Raw message delivery (the record itself as the body) reads the same
    assert parse_sqs_body(json.dumps(load("ses-bounce-permanent.json")))[0].event_id == event.event_id


def test_identity_notification_without_tag_still_names_the_recipient():
    record = load("ses-complaint.json")
    record["notificationType"] = record.pop("eventType")
    del record["mail"]["tags"]
    [event] = parse_ses_record(record)
    assert event.message_id is None and event.recipient_key == "email:recipient@example.com"


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        json.dumps({"Type": "Notification", "Message": "{"}),
        json.dumps({"eventType": "Open"}),
        json.dumps({"eventType": "Bounce"}),
    ],
)
def test_garbage_is_malformed(body):
    with pytest.raises(MalformedEvent):
        parse_sqs_body(body)


def test_sms_records_parse():
    success = parse_sms_record(json.dumps(load("sns-sms-delivery-success.json")))
    failure = parse_sms_record(json.dumps(load("sns-sms-delivery-failure.json")))
    assert success.kind is EventKind.SMS_SUCCESS and target_state(success) is MessageState.DELIVERED
    assert success.recipient_key == "sms:+12065550120"
    assert success.occurred_at == datetime(2026, 11, 29, 10, 0, 4, 558000, tzinfo=UTC)
    assert failure.kind is EventKind.SMS_FAILURE and failure.provider_response == "Invalid phone number"
    assert failure.event_id == "1077de7f-7c7a-5c4b-9b31-EXAMPLE22222#FAILURE"
    assert target_state(failure) is MessageState.FAILED


def test_subscription_envelope_decodes_and_control_is_skipped():
    batch = decode_subscription_event(load("cloudwatch-logs-subscription-event.json"))
    assert not batch.control and batch.log_group.endswith("/Failure")
    [record] = batch.records
    assert record.log_event_id == "37865443419563478262193466395587297618138442658230894592"
    assert parse_sms_record(record.message).provider_response == "Invalid phone number"
    control = decode_subscription_event(encode_subscription_event(load("cloudwatch-logs-control-message-decoded.json")))
    assert control.control and control.records == []
    # moto sends integer ids
    document = load("cloudwatch-logs-subscription-decoded.json")
    document["logEvents"][0]["id"] = 42
    assert decode_subscription_event(encode_subscription_event(document)).records[0].log_event_id == "42"
    with pytest.raises(MalformedEvent):
        decode_subscription_event({"awslogs": {"data": "not-base64!"}})


@pytest.mark.parametrize(
    "response",
    [
        "Invalid phone number",
        "Phone number is opted out",
        "Phone has blocked SMS",
        "Phone is on a blocked list",
        "Phone is blacklisted",
        "Destination is on a blocked list",
        "Destination is blacklisted",
        "phone is BLACKLISTED.",
    ],
)
def test_permanent_sms_failures_suppress(response):
    assert classify_sms_failure(response).action is Action.SUPPRESS


@pytest.mark.parametrize(
    "response",
    [
        "Phone carrier is currently unreachable/unavailable",
        "Unknown error attempting to reach phone",
        "This delivery would exceed max price",
    ],
)
def test_transient_sms_failures_do_not_suppress(response):
    verdict = classify_sms_failure(response)
    assert verdict.action is Action.NONE and verdict.known


def test_unknown_sms_string_is_transient_and_flagged():
    verdict = classify_sms_failure("Carrier says: try the moon")
    assert verdict.action is Action.NONE and not verdict.known


def test_ses_bounce_rules():
    assert classify_ses_bounce("Permanent", "General", "5.1.1").action is Action.SUPPRESS
    assert classify_ses_bounce("Permanent", "General", "5.2.2").action is Action.COUNT_TRANSIENT  # mailbox full
    assert classify_ses_bounce("Transient", "MailboxFull", "4.2.2").action is Action.COUNT_TRANSIENT
    assert classify_ses_bounce("Undetermined", "Undetermined", None).action is Action.COUNT_TRANSIENT
    [complaint] = parse_ses_record(load("ses-complaint.json"))
    assert verdict_for(complaint).action is Action.SUPPRESS
    [delivery] = parse_ses_record(load("ses-delivery.json"))
    assert verdict_for(delivery).action is Action.NONE


def test_transient_window():
    policy = TransientPolicy(limit=3, window=timedelta(days=7))
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    window = policy.window_after([t0, t0 + timedelta(days=1)], t0 + timedelta(days=6))
    assert policy.reached(window)
    window = policy.window_after([t0, t0 + timedelta(days=1)], t0 + timedelta(days=8))
    assert len(window) == 1 and not policy.reached(window)  # both older ones fell out
    assert policy.reached(policy.window_after([t0, t0], t0))  # same millisecond, still three bounces


def test_states_never_regress():
    assert MessageState.BOUNCED not in allowed_from(MessageState.DELIVERED)
    assert MessageState.BOUNCED in allowed_from(MessageState.COMPLAINED)  # complaint wins
    assert MessageState.DELIVERED in allowed_from(MessageState.BOUNCED)
    assert MessageState.ACCEPTED in allowed_from(MessageState.REJECTED)  # SES Reject after SendEmail
    # Evidence about an earlier attempt stops a queued retry (no second copy)
    for queued in (MessageState.RETRY, MessageState.PENDING, MessageState.UNKNOWN):
        assert queued in allowed_from(MessageState.ACCEPTED) and queued in allowed_from(MessageState.DELIVERED)
    assert MessageState.DELIVERED not in allowed_from(MessageState.ACCEPTED)
    assert MessageState.SUPPRESSED not in allowed_from(MessageState.ACCEPTED)


def test_cursor_keeps_ids_inside_the_overlap_only():
    state = {"start": 1_000_000, "seen": {"old": 1_000_000 - LOG_OVERLAP_MS - 1}}
    records = [LogRecord("a", 1_000_500, "{}"), LogRecord("b", 1_002_000, "{}")]
    advanced = advance_cursor(state, records)
    assert advanced["start"] == 1_002_000
    assert set(advanced["seen"]) == {"a", "b"}


_ATOM = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@given(st.lists(_ATOM, min_size=1, max_size=3), st.lists(_ATOM, min_size=1, max_size=3))
def test_an_address_that_skips_the_full_parser_reads_as_the_parser_reads_it(local, domain):
    raw = ".".join(local) + "@" + ".".join(domain)
    assert address_of(raw) == (parseaddr(raw)[1] or raw.strip())


def test_display_name_forms_still_go_through_the_parser():
    assert address_of('"Alice Example" <alice@example.com>') == "alice@example.com"
    assert address_of(" bob@example.com ") == "bob@example.com"


@pytest.mark.parametrize("response", ["Phone carrier has blocked this message", "Blocked as spam by phone carrier"])
def test_a_carrier_block_is_transient_and_does_not_suppress(response):
    # The carrier blocked this message (its content, its rate), not the number: the number stays sendable
    verdict = classify_sms_failure(response)
    assert verdict.action is Action.NONE and verdict.known
