"""The simulated providers' outcome rules (sendledger/providers/simulated/): one copy, used by
the local simulators and by a test caller's deployed sends."""

from datetime import UTC, datetime

import pytest

from sendledger.providers.simulated import events, rules
from sendledger.providers.simulated.rules import Fault, MailboxKind

SENT = datetime(2026, 12, 3, 10, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("success@simulator.amazonses.com", MailboxKind.SUCCESS),
        ("bounce@simulator.amazonses.com", MailboxKind.BOUNCE),
        ("Bounce+order-42@Simulator.AmazonSES.com", MailboxKind.BOUNCE),
        ("complaint@simulator.amazonses.com", MailboxKind.COMPLAINT),
        ("ooto@simulator.amazonses.com", MailboxKind.OOTO),
        ("suppressionlist@simulator.amazonses.com", MailboxKind.SUPPRESSIONLIST),
        ("nobody@simulator.amazonses.com", None),
        ("bounce@example.com", None),
    ],
)
def test_mailbox_simulator_addresses(address, kind):
    assert rules.mailbox_simulator_kind(address) == kind


@pytest.mark.parametrize(
    ("address", "label"),
    [
        ("alice+timeout-lost@example.com", Fault.TIMEOUT_LOST),
        ("ALICE+Timeout-Accepted@example.com", Fault.TIMEOUT_ACCEPTED),
        ("bob+throttle@example.com", Fault.THROTTLE),
        ("bob+throttle-not@example.com", None),
        ("alice@example.com", None),
    ],
)
def test_fault_labels(address, label):
    assert rules.fault_label(address) == label


def test_which_calls_a_fault_hits():
    lost = [rules.fault_before_acceptance(Fault.TIMEOUT_LOST, n) for n in range(3)]
    throttled = [rules.fault_before_acceptance(Fault.THROTTLE, n) for n in range(4)]
    assert lost == [Fault.TIMEOUT_LOST, None, None]  # the retry after proven absence gets through
    assert throttled == [Fault.THROTTLE] * rules.THROTTLED_CALLS + [None] * (4 - rules.THROTTLED_CALLS)
    assert rules.fault_before_acceptance(Fault.TIMEOUT_ACCEPTED, 0) is None  # it faults after acceptance
    assert rules.fault_before_acceptance(None, 0) is None


@pytest.mark.parametrize(
    ("number", "response"),
    [
        ("+12065550100", rules.SMS_SUCCESS_RESPONSE),
        ("+12065550149", rules.SMS_SUCCESS_RESPONSE),
        ("+12065550150", "Phone carrier is currently unreachable/unavailable"),
        ("+12065550160", "Invalid phone number"),
        ("+12065550175", "Phone number is opted out"),
        ("+12065550189", "Unknown error attempting to reach phone"),
        ("+12065550199", rules.NO_STATUS),
        ("+447700900123", rules.SMS_SUCCESS_RESPONSE),
    ],
)
def test_fictional_numbers(number, response):
    assert rules.sms_outcome(number) == response


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


def test_sendgrid_and_mailgun_events_follow_the_rules_and_name_the_test_caller_where_their_ids_go():
    from sendledger.domain import test_mode
    from sendledger.providers.mailgun.events import parse_event as mailgun_event
    from sendledger.providers.sendgrid.events import parse_event as sendgrid_event
    from sendledger.providers.simulated.mailgun_events import MailgunSend, mailgun_events
    from sendledger.providers.simulated.sendgrid_events import sendgrid_events

    sent_at = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    simulated = test_mode.simulated_provider_id("tester", "u1")
    args = {"sendledger_message_id": "m-1", "sendledger_escalates": "0"}
    bounce = "bounce@simulator.amazonses.com"
    records = sendgrid_events(bounce, simulated, simulated, sent_at, custom_args=args)
    assert [record["event"] for _, record in records] == ["processed", "bounce"]
    parsed = [sendgrid_event(record) for _, record in records]
    assert all(e is not None and test_mode.caller_of(e.provider_message_id) == "tester" for e in parsed)
    send = MailgunSend("complaint@simulator.amazonses.com", simulated, {"sendledger-message-id": "m-2"})
    records = mailgun_events(send, sent_at)
    assert [record["event"] for _, record in records] == ["accepted", "delivered", "complained"]
    assert [at for at, _ in records] == sorted(at for at, _ in records) and records[0][0] == sent_at
    parsed = [mailgun_event(record) for _, record in records]
    assert all(e is not None and test_mode.caller_of(e.provider_message_id) == "tester" for e in parsed)
