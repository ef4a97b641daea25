"""The simulator under moto's in-process mock, driven through real boto3 clients."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from local.constants import ACCOUNT_ID, CONFIGURATION_SET, SENDER_EMAIL
from local.resources import Resources
from local.simulator import THROTTLED_CALLS, Simulator, decode_subscription_event
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from tests.local.local_support import (
    NO_RETRIES,
    START,
    drain_ses_events,
    send_email,
    send_sms,
)
from tests.support.fakes import FakeClock
from tests.support.fixtures import aws_format


def shape(value: Any) -> Any:
    """Keys and value types, recursively: what "the same shape as the fixture" means."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def ses_sent_count() -> int:
    """How many sends moto's SES itself recorded (SES v1 shares the backend with SESv2)."""
    return int(boto3.client("ses").get_send_quota()["SentLast24Hours"])


ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


# --- email: outbox and events ----------------------------------------------------------------
def test_ordinary_address_is_accepted_recorded_and_delivered(simulator: Simulator, resources: Resources) -> None:
    response = send_email("recipient@example.com", message_id="msg_A", subject="Reset")

    (entry,) = simulator.outbox()
    assert entry == {
        "message_id": "msg_A",  # sendledger's, so the entry matches /v1/messages/{id}
        "channel": "email",
        "from": SENDER_EMAIL,
        "to": "recipient@example.com",
        "subject": "Reset",
        "text": "plain body",
        "html": "<p>html body</p>",
        "provider": "ses",
        "provider_message_id": response["MessageId"],
        "sent_at": START.strftime("%Y-%m-%dT%H:%M:%S.012Z"),
    }
    # Deferred: nothing reaches SQS before flush.
    assert drain_ses_events(resources) == []
    assert simulator.flush()["ses_events_published"] == 2

    events = drain_ses_events(resources)
    assert [record["eventType"] for _, record in events] == ["Send", "Delivery"]
    envelope_fixture = aws_format("sqs-body-sns-envelope-ses-bounce.json")
    for envelope, record in events:
        assert envelope["Type"] == "Notification"
        assert envelope["TopicArn"] == resources.ses_events_topic_arn
        assert set(envelope_fixture) <= set(envelope)
        assert record["mail"]["messageId"] == response["MessageId"]
        assert record["mail"]["tags"][SES_MESSAGE_ID_TAG] == ["msg_A"]
        assert record["mail"]["tags"]["ses:configuration-set"] == [CONFIGURATION_SET]
        assert ISO_MS.match(record["mail"]["timestamp"])
    send, delivery = (record for _, record in events)
    assert shape(send) == shape(aws_format("ses-send.json"))
    assert shape(delivery) == shape(aws_format("ses-delivery.json"))
    assert delivery["delivery"]["recipients"] == ["recipient@example.com"]


@pytest.mark.parametrize(
    ("address", "expected", "fixture", "subtype"),
    [
        ("success@simulator.amazonses.com", ["Send", "Delivery"], "ses-delivery.json", None),
        ("ooto+demo@simulator.amazonses.com", ["Send", "Delivery"], "ses-delivery.json", None),
        (
            "bounce@simulator.amazonses.com",
            ["Send", "Bounce"],
            "ses-bounce-permanent.json",
            "General",
        ),
        (
            "suppressionlist+x@simulator.amazonses.com",
            ["Send", "Bounce"],
            "ses-bounce-permanent.json",
            "OnAccountSuppressionList",
        ),
        (
            "complaint@simulator.amazonses.com",
            ["Send", "Delivery", "Complaint"],
            "ses-complaint.json",
            None,
        ),
    ],
)
def test_mailbox_simulator_addresses(
    simulator: Simulator,
    resources: Resources,
    clock: FakeClock,
    address: str,
    expected: list[str],
    fixture: str,
    subtype: str | None,
) -> None:
    response = send_email(address, message_id="msg_B")
    clock.advance(10)
    simulator.flush()
    records = [record for _, record in drain_ses_events(resources)]

    assert [record["eventType"] for record in records] == expected
    last = records[-1]
    assert shape(last) == shape(aws_format(fixture))
    assert last["mail"]["messageId"] == response["MessageId"]
    assert last["mail"]["destination"] == [address]
    assert last["mail"]["tags"][SES_MESSAGE_ID_TAG] == ["msg_B"]
    if subtype is not None:
        bounce = last["bounce"]
        assert bounce["bounceType"] == "Permanent"
        assert bounce["bounceSubType"] == subtype
        assert bounce["bouncedRecipients"][0]["emailAddress"] == address
        assert bounce["bouncedRecipients"][0]["status"] == "5.1.1"
    event_key = last["eventType"].lower()
    assert ISO_MS.match(last[event_key]["timestamp"])
    assert last[event_key]["timestamp"] > last["mail"]["timestamp"]


def test_event_times_never_run_ahead_of_emission(simulator: Simulator, resources: Resources) -> None:
    send_email("bounce@simulator.amazonses.com")
    simulator.flush()  # same instant as the send
    bounce = drain_ses_events(resources)[-1][1]
    assert bounce["bounce"]["timestamp"] == bounce["mail"]["timestamp"]


# --- email: label faults ----------------------------------------------------------------------
def test_timeout_accepted_accepts_then_times_out(simulator: Simulator, resources: Resources) -> None:
    with pytest.raises(ReadTimeoutError):
        send_email("alice+timeout-accepted@example.com", message_id="msg_T")

    (entry,) = simulator.outbox()
    assert entry["to"] == "alice+timeout-accepted@example.com"
    assert ses_sent_count() == 1
    simulator.flush()
    records = [record for _, record in drain_ses_events(resources)]
    assert [record["eventType"] for record in records] == ["Send", "Delivery"]
    # The only proof of acceptance the caller will ever get: the tag on the events.
    assert records[0]["mail"]["tags"][SES_MESSAGE_ID_TAG] == ["msg_T"]
    assert records[0]["mail"]["messageId"] == entry["provider_message_id"]


def test_timeout_lost_first_call_reaches_nobody_then_accepted(simulator: Simulator, resources: Resources) -> None:
    with pytest.raises(ReadTimeoutError):
        send_email("bob+timeout-lost@example.com")
    assert simulator.outbox() == []
    assert ses_sent_count() == 0
    simulator.flush()
    assert drain_ses_events(resources) == []

    response = send_email("bob+timeout-lost@example.com")
    (entry,) = simulator.outbox()
    assert entry["provider_message_id"] == response["MessageId"]
    assert ses_sent_count() == 1


def test_throttle_twice_then_accepted(simulator: Simulator, resources: Resources) -> None:
    for _ in range(THROTTLED_CALLS):
        with pytest.raises(ClientError) as raised:
            send_email("carol+throttle@example.com")
        error = raised.value.response
        assert error["Error"]["Code"] == "TooManyRequestsException"
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 429
        assert error["Error"]["Message"] == "Maximum sending rate exceeded."
    assert simulator.outbox() == []
    assert ses_sent_count() == 0  # moto's own stubber never saw the throttled calls

    send_email("carol+throttle@example.com")
    assert len(simulator.outbox()) == 1
    assert ses_sent_count() == 1


def test_throttle_is_a_modeled_sesv2_exception(simulator: Simulator) -> None:
    client = boto3.client("sesv2", config=NO_RETRIES)
    with pytest.raises(client.exceptions.TooManyRequestsException):
        client.send_email(
            FromEmailAddress="no-reply@example.com",
            Destination={"ToAddresses": ["dave+throttle@example.com"]},
            Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
        )


def test_labels_are_counted_per_address(simulator: Simulator) -> None:
    with pytest.raises(ReadTimeoutError):
        send_email("x+timeout-lost@example.com")
    with pytest.raises(ReadTimeoutError):
        send_email("y+timeout-lost@example.com")
    send_email("x+timeout-lost@example.com")
    assert [entry["to"] for entry in simulator.outbox()] == ["x+timeout-lost@example.com"]


def test_provider_rejection_is_not_recorded(simulator: Simulator) -> None:
    with pytest.raises(ClientError):
        boto3.client("sesv2").send_email(
            FromEmailAddress="someone@unverified.test",
            Destination={"ToAddresses": ["recipient@example.com"]},
            Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
        )
    assert simulator.outbox() == []
    assert simulator.pending()["ses_events"] == 0


def test_clients_created_before_install_are_not_observed(resources: Resources) -> None:
    early = boto3.client("sesv2")
    sim = Simulator.install(ses_topic_arn=resources.ses_events_topic_arn)
    try:
        early.send_email(
            FromEmailAddress="no-reply@example.com",
            Destination={"ToAddresses": ["recipient@example.com"]},
            Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
        )
        assert sim.outbox() == []
        send_email("recipient@example.com")
        assert len(sim.outbox()) == 1
    finally:
        sim.uninstall()


# --- SMS --------------------------------------------------------------------------------------
SMS_CASES = [
    ("+12065550100", "SUCCESS", "Message has been accepted by phone carrier"),
    ("+12065550149", "SUCCESS", "Message has been accepted by phone carrier"),
    ("+12065550150", "FAILURE", "Phone carrier is currently unreachable/unavailable"),
    ("+13125550165", "FAILURE", "Invalid phone number"),
    ("+12065550179", "FAILURE", "Phone number is opted out"),
    ("+12065550180", "FAILURE", "Unknown error attempting to reach phone"),
    ("+442071838750", "SUCCESS", "Message has been accepted by phone carrier"),
]


@pytest.mark.parametrize(("phone", "status", "provider_response"), SMS_CASES)
def test_sms_delivery_status_logs(
    simulator: Simulator,
    resources: Resources,
    clock: FakeClock,
    phone: str,
    status: str,
    provider_response: str,
) -> None:
    response = send_sms(phone)
    (entry,) = simulator.outbox()
    assert entry == {
        "message_id": None,  # SNS carries no sendledger id: the local stack fills it from the ledger
        "channel": "sms",
        "from": None,
        "to": phone,
        "subject": None,
        "text": "alert: disk full",
        "html": None,
        "provider": "sns",
        "provider_message_id": response["MessageId"],
        "sent_at": START.strftime("%Y-%m-%dT%H:%M:%S.012Z"),
    }
    delivered: list[dict[str, Any]] = []
    assert simulator.flush()["sms_records_written"] == 1  # no subscriber yet: records are kept
    assert simulator.pending()["sms_deliveries"] == 1
    clock.advance(5)
    result = simulator.flush(deliver_sms=delivered.append)
    assert result["sms_records_delivered"] == 1
    assert result["sms_records_written"] == 0
    assert simulator.pending()["sms_deliveries"] == 0

    (event,) = delivered
    assert set(event) == {"awslogs"}
    payload = decode_subscription_event(event)
    reference = aws_format("cloudwatch-logs-subscription-decoded.json")
    assert shape(payload) == shape(reference)
    group = resources.sms_success_log_group if status == "SUCCESS" else resources.sms_failure_log_group
    assert payload["messageType"] == "DATA_MESSAGE"
    assert payload["owner"] == ACCOUNT_ID
    assert payload["logGroup"] == group
    assert payload["logStream"] == response["MessageId"]
    (log_event,) = payload["logEvents"]
    assert re.fullmatch(r"\d{56}", log_event["id"])
    record = json.loads(log_event["message"])
    fixture = "sns-sms-delivery-success.json" if status == "SUCCESS" else "sns-sms-delivery-failure.json"
    assert shape(record) == shape(aws_format(fixture))
    assert record["status"] == status
    assert record["delivery"]["providerResponse"] == provider_response
    assert record["delivery"]["destination"] == phone
    assert record["delivery"]["smsType"] == "Transactional"
    assert record["notification"]["messageId"] == response["MessageId"]
    assert record["notification"]["timestamp"] == START.strftime("%Y-%m-%d %H:%M:%S.012")

    # The same record is in the log group, where the poller's FilterLogEvents finds it.
    logged = boto3.client("logs").filter_log_events(logGroupName=group)["events"]
    assert [json.loads(item["message"]) for item in logged] == [record]
    assert logged[0]["logStreamName"] == response["MessageId"]
    assert logged[0]["timestamp"] == log_event["timestamp"]


def test_sms_90_to_99_never_reports(simulator: Simulator, resources: Resources) -> None:
    send_sms("+12065550195")
    delivered: list[dict[str, Any]] = []
    result = simulator.flush(deliver_sms=delivered.append)
    assert len(simulator.outbox()) == 1
    assert delivered == []
    assert result["sms_records_written"] == 0
    for group in (resources.sms_success_log_group, resources.sms_failure_log_group):
        assert boto3.client("logs").filter_log_events(logGroupName=group)["events"] == []


def test_failed_subscription_delivery_is_retried(simulator: Simulator) -> None:
    send_sms("+12065550165")
    calls: list[dict[str, Any]] = []

    def broken(event: dict[str, Any]) -> None:
        calls.append(event)
        raise RuntimeError("ingestion down")

    assert simulator.flush(deliver_sms=broken)["sms_records_delivered"] == 0
    delivered: list[dict[str, Any]] = []
    assert simulator.flush(deliver_sms=delivered.append)["sms_records_delivered"] == 1
    assert delivered == calls  # the same event, not a second log record


def test_topic_publishes_are_not_sms(simulator: Simulator, resources: Resources) -> None:
    boto3.client("sns").publish(TopicArn=resources.ses_events_topic_arn, Message="{}")
    assert simulator.outbox() == []


def test_outbox_is_thread_safe(simulator: Simulator) -> None:
    from concurrent.futures import ThreadPoolExecutor

    phones = [f"+1206555010{i}" for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(send_sms, phones))
    assert sorted(entry["to"] for entry in simulator.outbox()) == sorted(phones)


def test_retries_max_attempts_1_still_retries_once(simulator: Simulator) -> None:
    """Documents a botocore trap the adapters must avoid.

    ``Config(retries={"max_attempts": 1})`` allows one *retry*: the SDK silently resends after
    a read timeout. With ``+timeout-accepted`` that is two accepted sends for one intent.
    ``{"total_max_attempts": 1}`` really disables retries.
    """
    from botocore.config import Config

    one_retry = boto3.client("sesv2", config=Config(retries={"max_attempts": 1, "mode": "standard"}))
    response = one_retry.send_email(
        FromEmailAddress="no-reply@example.com",
        Destination={"ToAddresses": ["erin+timeout-lost@example.com"]},
        Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
    )
    assert response["ResponseMetadata"]["RetryAttempts"] == 1
    assert len(simulator.outbox()) == 1


def test_the_simulators_own_no_copy_of_the_outcome_rules():
    """The rules are product code (a test caller's deployed sends use them): imported, not copied."""
    import local.simulator as local_simulator
    from local.simulator import faults
    from sendledger.providers.simulated import rules

    assert local_simulator.mailbox_simulator_kind is rules.mailbox_simulator_kind
    assert local_simulator.sms_outcome is rules.sms_outcome
    assert faults.fault_label is rules.fault_label
    assert not (Path(local_simulator.__file__).parent / "mailbox.py").exists()
