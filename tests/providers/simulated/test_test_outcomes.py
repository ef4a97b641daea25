"""Test mode's own event path as ingestion reads it (providers/simulated/outcomes.py): each carrier's
body by that carrier's parser, and nothing that does not name a test caller."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from sendledger import bootstrap
from sendledger.domain import test_mode
from sendledger.domain.events import EventKind, MalformedEvent
from sendledger.domain.provider import Provider
from sendledger.providers.simulated.outcomes import envelope
from sendledger.providers.simulated.outcomes import parse_test_outcome as parse_with
from sendledger.providers.sns.simulation import sms_status
from sendledger.settings import Settings

SENT = datetime(2026, 12, 6, 15, 0, tzinfo=UTC)
INVALID_NUMBER = "+12065550165"  # the simulator's 60-69: invalid number


def parse_test_outcome(raw: str) -> list:
    """As the poller's test outcomes lane reads a body: each carrier's slice parses its own."""
    return parse_with(raw, bootstrap.simulations(Settings()))


def record(message_id: str) -> str:
    status = sms_status(INVALID_NUMBER, message_id, SENT, "Transactional")
    assert status is not None
    return json.dumps(status.record)


def test_a_simulated_sms_failure_is_read_as_sns_would_have_logged_it() -> None:
    simulated = test_mode.simulated_provider_id("tester-app", "u1")
    [event] = parse_test_outcome(envelope(Provider.SNS, record(simulated)))
    assert event.kind is EventKind.SMS_FAILURE and event.provider_message_id == simulated
    assert test_mode.scoped(event).recipient_key == f"test:tester-app:sms:{INVALID_NUMBER}"


def test_a_record_that_names_no_test_caller_is_refused() -> None:
    # A real SNS message id: whoever wrote this queue must not reach a real recipient
    with pytest.raises(MalformedEvent, match="must name a test caller"):
        parse_test_outcome(envelope(Provider.SNS, record("0f1e2d3c-real-sns-message-id")))


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps({"carrier": "pigeon", "body": "{}"}),
        json.dumps({"carrier": "infrai", "body": "{}"}),  # registered, but it pushes nothing
        json.dumps({"carrier": "sns", "body": {"status": "FAILURE"}}),
        "not json",
    ],
)
def test_anything_but_an_envelope_of_a_known_carrier_is_malformed(raw: str) -> None:
    with pytest.raises(MalformedEvent):
        parse_test_outcome(raw)


def test_a_sealed_provider_id_names_its_own_message_only() -> None:
    sealed = test_mode.sealed_provider_id("tester-app", "msg_A", "n" * 32)
    assert test_mode.caller_of(sealed) == "tester-app"
    assert test_mode.seals(sealed, "msg_A")
    assert not test_mode.seals(sealed, "msg_B")  # a real message named beside a test caller's id
    assert not test_mode.seals(test_mode.simulated_provider_id("tester-app", "0" * 48), "msg_A")
    assert not test_mode.seals(None, "msg_A") and not test_mode.seals("0100018c-real", "msg_A")
