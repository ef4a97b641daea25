"""Simulated SES (providers/ses/simulation.py): its event-publishing records follow the rules."""

from datetime import UTC, datetime

from sendledger.providers.ses import simulation as events

SENT = datetime(2026, 12, 3, 10, 0, 0, tzinfo=UTC)


def _mail(to: str) -> events.SesMail:
    return events.SesMail("app@example.com", [to], "hello", "sendledger-events", {"sendledger-message-id": ["msg_1"]})


def test_ses_records_follow_the_mailbox_rules():
    def kinds(to: str) -> list[str]:
        found = events.ses_events(_mail(to), "ses-1", SENT, region="us-east-1", account_id="123456789012")
        return [record["eventType"] for _, record in found]

    assert kinds("bounce@simulator.amazonses.com") == ["Send", "Bounce"]
    assert kinds("suppressionlist@simulator.amazonses.com") == ["Send", "Bounce"]
    assert kinds("complaint@simulator.amazonses.com") == ["Send", "Delivery", "Complaint"]
    assert kinds("anyone@example.com") == ["Send", "Delivery"]
    record = events.ses_events(_mail("bounce@simulator.amazonses.com"), "ses-1", SENT, region="r", account_id="1")[1][1]
    assert record["mail"]["tags"]["sendledger-message-id"] == ["msg_1"]
    assert record["bounce"]["bounceType"] == "Permanent"
