"""SendGrid Event Webhook events parsed from the reference payload, and what each one decides."""

from __future__ import annotations

import json

import pytest

from sendledger.domain.events import EventKind, MalformedEvent
from sendledger.domain.outcomes import target_state
from sendledger.domain.suppression_rules import Action, verdict_for
from sendledger.providers.sendgrid.events import parse_batch, parse_event, parse_queued, x_message_id
from tests.providers.formats import provider_format

BATCH = provider_format("sendgrid-event-webhook.json")


def parsed() -> list:
    return [parse_event(record) for record in BATCH]


def test_every_delivery_event_of_the_sample_is_read_and_engagement_is_skipped() -> None:
    kinds = [(event.kind, event.recipient_key) if event else None for event in parsed()]
    assert kinds == [
        (EventKind.SEND, "email:recipient@example.com"),
        (EventKind.SEND, "email:unknown-user@example.com"),
        (EventKind.SEND, "email:blocked@example.org"),
        (EventKind.DELIVERY, "email:recipient@example.com"),
        (EventKind.DELIVERY_DELAY, "email:unknown-user@example.com"),
        (EventKind.BOUNCE, "email:blocked@example.org"),
        (EventKind.REJECT, "email:suppressed@example.com"),
        None,  # open
        None,  # click
        (EventKind.COMPLAINT, "email:recipient@example.com"),
        (EventKind.BOUNCE, "email:unknown-user@example.com"),
    ]


def test_ids_come_from_the_custom_argument_and_sg_event_id() -> None:
    first = parsed()[0]
    assert first is not None and first.source == "sendgrid"
    assert first.message_id == "msg_01JEXAMPLE0000000000000000"
    assert first.event_id == BATCH[0]["sg_event_id"]
    assert first.dedupe_key == f"EVT#sendgrid#{BATCH[0]['sg_event_id']}"
    assert first.provider_message_id == "EXAMPLE-xMsgId-000000A.recvd-example-0-6749A0E0-1.0"
    assert x_message_id(first.provider_message_id) == "EXAMPLE-xMsgId-000000A"
    assert first.occurred_at.isoformat() == "2026-11-29T10:00:01+00:00"


def test_no_raw_address_reaches_the_evidence() -> None:
    for event in filter(None, parsed()):
        assert "@" not in json.dumps(event.evidence) and "@" not in event.event_id


@pytest.mark.parametrize(
    ("index", "action", "state"),
    [
        (0, Action.NONE, "accepted"),  # processed
        (3, Action.NONE, "delivered"),
        (4, Action.NONE, "accepted"),  # deferred: SendGrid keeps trying
        (5, Action.COUNT_TRANSIENT, "bounced"),  # blocked: the message or IP, not the address
        (6, Action.SUPPRESS, "rejected"),  # dropped, Bounced Address
        (9, Action.SUPPRESS, "complained"),  # spamreport
        (10, Action.SUPPRESS, "bounced"),  # bounce, 5.1.1
    ],
)
def test_suppression_rules_and_states(index: int, action: Action, state: str) -> None:
    event = parsed()[index]
    assert event is not None
    verdict = verdict_for(event)
    assert verdict.action is action and verdict.known
    target = target_state(event)
    assert target is not None and target.value == state


def test_a_drop_about_the_message_does_not_suppress_and_an_unknown_one_is_flagged() -> None:
    spam_content = parse_event({**BATCH[6], "reason": "Spam Content"})
    assert spam_content is not None and verdict_for(spam_content).action is Action.NONE
    odd = parse_event({**BATCH[6], "reason": "Something New"})
    assert odd is not None and verdict_for(odd).action is Action.NONE and not verdict_for(odd).known


def test_a_full_mailbox_counts_as_transient() -> None:
    full = parse_event({**BATCH[10], "status": "5.2.2"})
    assert full is not None and verdict_for(full).action is Action.COUNT_TRANSIENT


def test_unknown_keys_are_ignored_and_bad_events_are_malformed() -> None:
    assert parse_event({**BATCH[0], "brand_new_field": {"x": 1}}) is not None
    with pytest.raises(MalformedEvent):
        parse_event({k: v for k, v in BATCH[0].items() if k != "sg_event_id"})
    with pytest.raises(MalformedEvent):
        parse_event({**BATCH[0], "timestamp": "yesterday"})
    with pytest.raises(MalformedEvent):
        parse_batch(b'{"event": "processed"}')
    with pytest.raises(MalformedEvent):
        parse_queued("[1]")
    assert parse_batch(json.dumps(BATCH).encode()) == BATCH
