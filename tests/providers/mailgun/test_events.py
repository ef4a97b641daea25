"""Mailgun parsers, rules and webhook signatures against the reference payloads."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from sendledger.domain.events import EventKind, MalformedEvent
from sendledger.domain.messages import MessageState
from sendledger.domain.outcomes import target_state
from sendledger.domain.suppression_rules import Action, verdict_for
from sendledger.providers.mailgun.events import bare_message_id, parse_event, parse_events_page
from sendledger.providers.mailgun.signature import SignatureCheck, check_signature, expected_signature, signature_block
from tests.support.provider_fixtures import provider_format

PAGE = provider_format("mailgun-events-page.json")
VECTOR = provider_format("mailgun-webhook-signature-vector.json")
WEBHOOK = provider_format("mailgun-webhook.json")
ID10 = "msg_01JEXAMPLE0000000000000010"
ID11 = "msg_01JEXAMPLE0000000000000011"
ID12 = "msg_01JEXAMPLE0000000000000012"


def test_the_reference_page_parses_in_order_with_its_next_url():
    page = parse_events_page(PAGE)
    assert len(page.items) == 9 and all(item.event is not None for item in page.items)
    assert [item.timestamp for item in page.items] == sorted(item.timestamp for item in page.items)
    assert page.last_timestamp == 1795947010.891234
    assert page.next_url == PAGE["paging"]["next"]


@pytest.mark.parametrize(
    ("index", "kind", "target", "message_id", "action"),
    [
        (0, EventKind.SEND, MessageState.ACCEPTED, ID10, Action.NONE),
        (3, EventKind.DELIVERY, MessageState.DELIVERED, ID10, Action.NONE),
        # temporary: Mailgun retries; proof of acceptance, no outcome, nothing counted
        (4, EventKind.DELIVERY_DELAY, MessageState.ACCEPTED, ID11, Action.NONE),
        (5, EventKind.BOUNCE, MessageState.BOUNCED, ID12, Action.SUPPRESS),  # suppress-bounce (605)
        (6, EventKind.UNSUBSCRIBE, None, ID10, Action.SUPPRESS),
        (7, EventKind.COMPLAINT, MessageState.COMPLAINED, ID10, Action.SUPPRESS),
        (8, EventKind.BOUNCE, MessageState.BOUNCED, ID11, Action.SUPPRESS),  # bounce 5.1.1
    ],
)
def test_each_reference_item_maps_to_its_state_and_rule(index, kind, target, message_id, action):
    raw = PAGE["items"][index]
    event = parse_event(raw)
    assert event is not None
    assert event.source == "mailgun" and event.kind is kind
    assert target_state(event) is target
    assert verdict_for(event).action is action and verdict_for(event).known
    assert event.message_id == message_id
    assert event.provider_message_id == raw["message"]["headers"]["message-id"]
    assert event.recipient_key == f"email:{raw['recipient']}"
    assert event.occurred_at == datetime.fromtimestamp(raw["timestamp"], UTC)
    # No raw address in the dedupe id or the evidence
    assert raw["recipient"] not in event.event_id + json.dumps(event.evidence)


def test_event_ids_are_unique_per_day_so_the_dedupe_key_carries_the_day():
    event = parse_event(PAGE["items"][0])
    assert event is not None
    assert event.event_id == "EXAMPLEevtId-000000001#2026-11-29"
    assert event.dedupe_key == "EVT#mailgun#EXAMPLEevtId-000000001#2026-11-29"
    next_day = parse_event({**PAGE["items"][0], "timestamp": PAGE["items"][0]["timestamp"] + 86_400})
    assert next_day is not None and next_day.dedupe_key != event.dedupe_key


def test_the_webhook_event_data_is_the_same_event_as_the_page_item():
    from_webhook = parse_event(WEBHOOK["event-data"])
    from_page = parse_event(PAGE["items"][8])
    assert from_webhook == from_page


def test_unknown_fields_null_tags_and_engagement_events_are_tolerated():
    raw = {**PAGE["items"][3], "tags": None, "some-new-field": {"x": 1}}
    assert parse_event(raw) == parse_event(PAGE["items"][3])
    assert parse_event({**PAGE["items"][3], "event": "opened"}) is None


def test_a_rejected_event_has_no_recipient_but_still_names_the_message():
    raw = {
        "event": "rejected",
        "id": "EXAMPLEevtId-rej",
        "timestamp": 1795946400.5,
        "reject": {"reason": "Sandbox subdomains are for test purposes only"},
        "user-variables": {"sendledger-message-id": ID10},
        "message": {"headers": {"message-id": "x@mg.example.com"}},
    }
    event = parse_event(raw)
    assert event is not None and event.kind is EventKind.REJECT and event.recipient_key is None
    assert target_state(event) is MessageState.REJECTED and event.message_id == ID10


@pytest.mark.parametrize(
    ("reason", "status", "action", "known"),
    [
        ("old", None, Action.COUNT_TRANSIENT, True),
        ("espblock", "5.7.1", Action.COUNT_TRANSIENT, True),
        ("generic", "5.1.1", Action.SUPPRESS, True),
        ("generic", "5.4.4", Action.COUNT_TRANSIENT, True),
        ("bounce", "5.2.2", Action.COUNT_TRANSIENT, True),  # mailbox full reported as permanent
        ("suppress-complaint", None, Action.SUPPRESS, True),
        ("something-new", None, Action.COUNT_TRANSIENT, False),  # logged, treated as transient
    ],
)
def test_permanent_failure_reasons(reason, status, action, known):
    raw = json.loads(json.dumps(PAGE["items"][8]))
    raw["reason"] = reason
    raw["delivery-status"] = {"code": 550, **({"enhanced-code": status} if status else {})}
    event = parse_event(raw)
    assert event is not None
    verdict = verdict_for(event)
    assert (verdict.action, verdict.known) == (action, known)


@pytest.mark.parametrize(
    "raw",
    [
        "not an object",
        {"id": "x", "timestamp": 1.0},  # no event
        {"event": "delivered", "timestamp": 1.0},  # no id
        {"event": "delivered", "id": "x"},  # no timestamp
        {"event": "teleported", "id": "x", "timestamp": 1.0},
    ],
)
def test_unreadable_events_are_malformed(raw):
    with pytest.raises(MalformedEvent):
        parse_event(raw)


def test_an_unreadable_item_stays_in_the_page_with_its_neighbours_time():
    page = parse_events_page({"items": [PAGE["items"][0], {"event": "delivered"}], "paging": {}})
    assert page.items[1].event is None and page.items[1].error
    assert page.items[1].timestamp == page.items[0].timestamp
    assert page.next_url is None
    with pytest.raises(MalformedEvent):
        parse_events_page({"paging": {}})


def test_the_send_answer_id_loses_its_brackets():
    answer = provider_format("mailgun-messages-response.json")
    assert bare_message_id(answer["id"]) == "20261129100000.0000000000000010@mg.example.com"


# --- webhook signatures ------------------------------------------------------------------------

KEY = VECTOR["signing_key_TEST_ONLY"].encode()
AT = datetime.fromtimestamp(int(VECTOR["timestamp"]) + 5, UTC)


def test_the_reference_vector_verifies():
    assert expected_signature(KEY, VECTOR["timestamp"], VECTOR["token"]) == VECTOR["signature"]
    block = signature_block(WEBHOOK)
    assert block is not None and block.signature == VECTOR["signature"]
    assert check_signature(block, KEY, AT, 300) is SignatureCheck.VALID
    assert block.token_hash != block.token and len(block.token_hash) == 64


@pytest.mark.parametrize("case", VECTOR["negative_cases"], ids=lambda case: case["case"])
def test_each_negative_case_fails(case):
    key = KEY if case["signing_key"] == "same" else case["signing_key"].encode()
    timestamp = VECTOR["timestamp"] if case["timestamp"] == "same" else case["timestamp"]
    token = VECTOR["token"] if case["token"] == "same" else case["token"]
    if "message_override" in case:  # the wrong order: signed as token + timestamp
        assert expected_signature(key, "", case["message_override"]) != VECTOR["signature"]
        return
    block = signature_block({"signature": {"timestamp": timestamp, "token": token, "signature": VECTOR["signature"]}})
    assert check_signature(block, key, AT, 300) is SignatureCheck.MISMATCH


def test_stale_and_missing_blocks_are_refused():
    block = signature_block(WEBHOOK)
    late = datetime.fromtimestamp(int(VECTOR["timestamp"]) + 301, UTC)
    assert check_signature(block, KEY, late, 300) is SignatureCheck.STALE
    early = datetime.fromtimestamp(int(VECTOR["timestamp"]) - 301, UTC)
    assert check_signature(block, KEY, early, 300) is SignatureCheck.STALE
    assert check_signature(signature_block({}), KEY, AT, 300) is SignatureCheck.MISSING
    assert signature_block({"signature": {"timestamp": "1", "token": "t"}}) is None
    odd = signature_block({"signature": {"timestamp": VECTOR["timestamp"], "token": "t", "signature": "é" * 64}})
    assert check_signature(odd, KEY, AT, 300) is SignatureCheck.MISMATCH
