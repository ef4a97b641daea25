"""Simulated SNS (providers/sns/simulation.py): its delivery-status records follow the number rules."""

from datetime import UTC, datetime

from sendledger.providers.sns import simulation as events

SENT = datetime(2026, 12, 3, 10, 0, 0, tzinfo=UTC)


def test_sns_status_records_follow_the_number_rules():
    delivered = events.sms_status("+12065550100", "sns-1", SENT, "Transactional")
    failed = events.sms_status("+12065550165", "sns-2", SENT, "Transactional")
    assert delivered is not None and not delivered.failure and delivered.record["status"] == "SUCCESS"
    assert (
        failed is not None
        and failed.failure
        and failed.record["delivery"]["providerResponse"] == "Invalid phone number"
    )
    assert failed.record["notification"] == {"messageId": "sns-2", "timestamp": "2026-12-03 10:00:00.000"}
    assert events.sms_status("+12065550195", "sns-3", SENT, "Transactional") is None
