"""Simulated Mailgun (providers/mailgun/simulation.py): its events follow the rules and name the
test caller where Mailgun's message id goes."""

from datetime import UTC, datetime

from sendledger.domain import test_mode
from sendledger.providers.mailgun.events import parse_event as mailgun_event
from sendledger.providers.mailgun.simulation import MailgunSend, mailgun_events


def test_mailgun_events_follow_the_rules_and_name_the_test_caller_where_its_ids_go():
    sent_at = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    simulated = test_mode.simulated_provider_id("tester", "u1")
    send = MailgunSend("complaint@simulator.amazonses.com", simulated, {"sendledger-message-id": "m-2"})
    records = mailgun_events(send, sent_at)
    assert [record["event"] for _, record in records] == ["accepted", "delivered", "complained"]
    assert [at for at, _ in records] == sorted(at for at, _ in records) and records[0][0] == sent_at
    parsed = [mailgun_event(record) for _, record in records]
    assert all(e is not None and test_mode.caller_of(e.provider_message_id) == "tester" for e in parsed)
