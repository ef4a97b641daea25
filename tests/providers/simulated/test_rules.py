"""The simulated providers' outcome rules (sendledger/providers/simulated/rules.py): one copy,
used by every slice's simulation, so by the local simulators and by a test caller's deployed sends."""

from datetime import UTC, datetime

import pytest

from sendledger.providers.simulated import rules
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
