"""The status publisher on moto's DynamoDB Stream: real sends and events in, EventBridge events out."""

from __future__ import annotations

import pytest

from tests.integration.conftest import ses_record
from tests.support.fakes import ADMIN, CALLER
from tests.support.status_out import by_message, duplicated_ids, states, status_out_harness

BOUNCE = "bounce@simulator.amazonses.com"


def send(api, to, key):
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})
    assert status == 202
    return view


@pytest.fixture
def pump(services):
    return status_out_harness(services.settings)[0]


def test_a_bounce_publishes_the_message_states_and_the_suppression(api, ingestion, clock, healthy_watermarks, pump):
    view = send(api, BOUNCE, "k-bounce")
    clock.advance(2)
    pmid = view["provider_message_id"]
    ingestion.publish(ses_record("Send", view["message_id"], BOUNCE, clock.now(), pmid))
    ingestion.publish(ses_record("Bounce", view["message_id"], BOUNCE, clock.now(), pmid))
    ingestion.poll()

    pump.pump()
    events = pump.events
    assert states(events, view["message_id"]) == [(None, "sending"), ("sending", "accepted"), ("accepted", "bounced")]
    last = by_message(events, view["message_id"])[-1]
    assert last["source"] == "sendledger" and last["detail-type"] == "sendledger.message.state-changed"
    detail = last["detail"]
    assert set(detail) == {
        "event_id", "message_id", "state", "previous_state", "channel", "to", "template", "category",
        "reason", "provider", "provider_message_id", "business_event_id", "caller_id", "occurred_at",
    }  # fmt: skip
    assert detail["caller_id"] == CALLER  # the owner: its callback goes to this caller alone
    assert detail["template"] == {"id": "alert", "version": "1"}
    assert (detail["channel"], detail["provider"], detail["provider_message_id"]) == ("email", "ses", pmid)
    assert detail["reason"]  # the bounce's diagnostic
    suppression = [e for e in events if e["detail-type"] == "sendledger.suppression.changed"]
    assert [(e["detail"]["recipient"], e["detail"]["suppressed"], e["detail"]["version"]) for e in suppression] == [
        (BOUNCE, True, 1)
    ]
    assert suppression[0]["detail"]["actor"] == "sendledger-events"
    assert "caller_id" not in suppression[0]["detail"]  # every caller's recipient: nobody's event
    assert not duplicated_ids(events)


def test_a_send_named_by_its_business_event_carries_that_id_in_its_events(api, pump):
    body = {
        "channel": "email",
        "to": "erin@example.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "s"},
        "event_id": "order-42-shipped",
    }
    status, _, view = api("POST", "/v1/messages", body)
    assert status == 202
    pump.pump()
    mine = [e["detail"] for e in pump.events if e["detail"].get("message_id") == view["message_id"]]
    assert [d["state"] for d in mine] == ["sending", "accepted"]
    assert {d["business_event_id"] for d in mine} == {"order-42-shipped"}
    other = send(api, "frank@example.com", "k-frank")
    pump.pump()
    assert {
        e["detail"]["business_event_id"] for e in pump.events if e["detail"].get("message_id") == other["message_id"]
    } == {None}


def test_an_admin_act_is_a_suppression_event_and_an_unchanged_one_is_not(api, pump):
    path = "/v1/admin/suppressions/carol%40example.com"
    for _ in range(2):
        assert api("PUT", path, {"reason": "asked to stop"})[0] == 200
    assert api("DELETE", path + "?reason=asked%20again")[0] == 200
    pump.pump()
    changes = [e["detail"] for e in pump.events if e["detail-type"] == "sendledger.suppression.changed"]
    assert [(c["recipient"], c["suppressed"], c["version"], c["reason"], c["actor"]) for c in changes] == [
        ("carol@example.com", True, 1, "asked to stop", ADMIN),
        ("carol@example.com", False, 2, "asked again", ADMIN),
    ]


def test_a_record_published_again_repeats_its_ids(api, pump):
    send(api, "dave@example.com", "k-dave")
    records = list(pump.stream.batch())
    first = [e.event_id for r in records for e in pump_runtime_events(pump, r)]
    again = [e.event_id for r in records for e in pump_runtime_events(pump, r)]
    assert first and first == again


def pump_runtime_events(pump, record):
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.adapters.dynamodb.table import Table
    from tests.conftest import TABLE

    return LedgerStream(Table(TABLE)).events_of(record)
