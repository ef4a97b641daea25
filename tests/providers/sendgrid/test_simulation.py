"""Simulated SendGrid (providers/sendgrid/simulation.py): its events follow the rules and name the
test caller where SendGrid's message id goes."""

from datetime import UTC, datetime

from sendledger.domain import test_mode
from sendledger.providers.sendgrid.events import parse_event as sendgrid_event
from sendledger.providers.sendgrid.simulation import sendgrid_events


def test_sendgrid_events_follow_the_rules_and_name_the_test_caller_where_its_ids_go():
    sent_at = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    simulated = test_mode.simulated_provider_id("tester", "u1")
    args = {"sendledger_message_id": "m-1", "sendledger_escalates": "0"}
    bounce = "bounce@simulator.amazonses.com"
    records = sendgrid_events(bounce, simulated, simulated, sent_at, custom_args=args)
    assert [record["event"] for _, record in records] == ["processed", "bounce"]
    parsed = [sendgrid_event(record) for _, record in records]
    assert all(e is not None and test_mode.caller_of(e.provider_message_id) == "tester" for e in parsed)
