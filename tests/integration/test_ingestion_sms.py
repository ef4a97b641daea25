"""SNS SMS delivery-status records: the subscription handler and the poller's reconciliation."""

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sendledger import bootstrap
from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
from sendledger.domain.messages import DueKind
from sendledger.handlers import sms_delivery_logs
from sendledger.ports.log_subscription import LogRecord
from sendledger.ports.status_out import AcceptedSms
from sendledger.providers.sns.events import encode_subscription_event
from sendledger.providers.sns.lane import ingest_log_record
from sendledger.usecases.ingest import IngestReport
from tests.integration.conftest import FAILURE_GROUP, SUCCESS_GROUP, fixture, sms_record
from tests.support.counting import Observer, count_dynamodb_requests, observing
from tests.support.fakes import FakeLambdaContext
from tests.support.outbox import sent_sms
from tests.support.status_out import status_out_harness

INVALID = "+12065550165"
FLAKY = "+12065550155"


def send_sms(api, to, key):
    body = {"channel": "sms", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})
    assert status == 202 and view["state"] == "accepted"
    return view


def deliver_subscription(ingestion, monkeypatch, group, messages, ids=None):

    monkeypatch.setattr(bootstrap, "runtime", lambda: ingestion.services)
    document = fixture("cloudwatch-logs-subscription-decoded.json")
    document["logGroup"] = group
    document["logEvents"] = [
        {"id": (ids or [])[i] if ids else 1000 + i, "timestamp": 1795946405120, "message": message}
        for i, message in enumerate(messages)
    ]
    return sms_delivery_logs.lambda_handler(
        encode_subscription_event(document), FakeLambdaContext(function_name="sendledger-sms-delivery-logs")
    )


def view(api, message_id):
    return api("GET", f"/v1/messages/{message_id}")[2]


def suppressed(api, number):
    return api("GET", f"/v1/suppressions/{number}")[2]["suppressed"]


def test_invalid_number_is_suppressed_at_once(api, ingestion, clock, healthy_watermarks, monkeypatch):
    sent = send_sms(api, INVALID, "s-1")
    # No receipt yet (the publisher writes it from the stream): the record finds the send through the number
    clock.advance(5)
    record = sms_record(sent["provider_message_id"], INVALID, "FAILURE", "Invalid phone number", clock.now())
    result = deliver_subscription(ingestion, monkeypatch, FAILURE_GROUP, [record])
    assert result == {"applied": 1, "duplicates": 0, "suppressed": 1}
    message = view(api, sent["message_id"])
    assert message["state"] == "failed" and message["reason"] == "sms: Invalid phone number"
    assert suppressed(api, INVALID) is True
    # The next send to that number is not sent
    body = {"channel": "sms", "to": INVALID, "template": {"id": "alert", "version": "1"}, "params": {"summary": "x"}}
    assert api("POST", "/v1/messages", body, headers={"Idempotency-Key": "s-2"})[2]["state"] == "suppressed"
    assert len(sent_sms()) == 1


def test_carrier_unreachable_fails_without_suppression_or_resend(
    api, ingestion, clock, healthy_watermarks, monkeypatch
):
    sent = send_sms(api, FLAKY, "s-1")
    record = sms_record(
        sent["provider_message_id"], FLAKY, "FAILURE", "Phone carrier is currently unreachable/unavailable", clock.now()
    )
    deliver_subscription(ingestion, monkeypatch, FAILURE_GROUP, [record])
    assert view(api, sent["message_id"])["state"] == "failed"
    assert suppressed(api, FLAKY) is False
    assert ingestion.services.due_work.count(DueKind.OUTCOME) == 1  # the receipt asks the poller to look
    clock.advance(600)
    ingestion.poll()
    assert len(sent_sms()) == 1  # no automatic resend
    assert ingestion.services.due_work.count(DueKind.OUTCOME) == 0  # no escalation: the marker is dropped


def test_unknown_provider_string_is_transient(api, ingestion, clock, healthy_watermarks, monkeypatch):
    sent = send_sms(api, FLAKY, "s-1")
    record = sms_record(sent["provider_message_id"], FLAKY, "FAILURE", "Carrier exploded", clock.now())
    deliver_subscription(ingestion, monkeypatch, FAILURE_GROUP, [record])
    assert view(api, sent["message_id"])["state"] == "failed" and suppressed(api, FLAKY) is False


def test_a_status_record_costs_one_write_new_or_duplicate(api, services, ingestion, clock, healthy_watermarks):
    # Given an accepted SMS, and the receipt the publisher wrote under SNS's message id from its outcome
    sent = send_sms(api, "+12065550120", "s-1")
    status_out_harness(services.settings)[0].pump()
    record = sms_record(
        sent["provider_message_id"], "+12065550120", "SUCCESS", "Message has been accepted", clock.now()
    )
    report = IngestReport()
    # When its status record is applied, Then one conditional write on the receipt: no lookup
    with count_dynamodb_requests() as counter:
        ingest_log_record(services.sink, LogRecord("1", 0, record), report)
    assert counter.operations == {"UpdateItem": 1}
    message = view(api, sent["message_id"])
    assert message["state"] == "delivered"
    [event] = [entry for entry in message["history"] if entry["type"] == "event:SmsSuccess"]
    assert event["event_id"] == f"{sent['provider_message_id']}#SUCCESS" and event["state"] == "delivered"
    # And the same record again is one refused conditional write that changes nothing
    with count_dynamodb_requests() as counter:
        ingest_log_record(services.sink, LogRecord("1", 0, record), report)
    assert report.duplicates == 1 and counter.operations == {"UpdateItem": 1}
    assert view(api, sent["message_id"])["history"] == message["history"]


def test_a_late_success_does_not_undo_a_failure_on_the_receipt(api, ingestion, clock, healthy_watermarks, monkeypatch):
    sent = send_sms(api, FLAKY, "s-1")
    pmid = sent["provider_message_id"]
    failure = sms_record(pmid, FLAKY, "FAILURE", "Phone carrier is currently unreachable/unavailable", clock.now())
    success = sms_record(pmid, FLAKY, "SUCCESS", "Message has been accepted by phone carrier", clock.now())
    # When the failure is applied, and then (out of order) a success for the same send
    deliver_subscription(ingestion, monkeypatch, FAILURE_GROUP, [failure])
    result = deliver_subscription(ingestion, monkeypatch, SUCCESS_GROUP, [success], ids=[2000])
    # Then the message stays failed and both records are in its history
    assert result["applied"] == 1
    message = view(api, sent["message_id"])
    assert message["state"] == "failed"
    late = [entry for entry in message["history"] if entry["type"] == "event:SmsSuccess"]
    assert late and late[0]["state_unchanged"] == "failed" and late[0]["would_be"] == "delivered"


def test_control_message_is_skipped(ingestion, monkeypatch):

    monkeypatch.setattr(bootstrap, "runtime", lambda: ingestion.services)
    event = encode_subscription_event(fixture("cloudwatch-logs-control-message-decoded.json"))
    assert sms_delivery_logs.lambda_handler(event, FakeLambdaContext())["control"] is True


def test_reconciliation_recovers_a_missed_subscription_delivery(api, services, ingestion, clock, healthy_watermarks):
    sent = send_sms(api, INVALID, "s-1")
    clock.advance(3)
    # The record reached CloudWatch Logs but the subscription invocation never happened
    ingestion.log_sms(
        FAILURE_GROUP,
        sms_record(sent["provider_message_id"], INVALID, "FAILURE", "Invalid phone number", clock.now()),
        clock.now(),
    )
    ingestion.log_sms(SUCCESS_GROUP, "not json at all", clock.now())
    clock.advance(30)
    started = clock.now()
    report = ingestion.poll()
    assert report.read_to_end["sms"] and report.applied == 1 and report.poison == 1
    assert view(api, sent["message_id"])["state"] == "failed" and suppressed(api, INVALID) is True
    assert services.poller_state.watermark("sms") == started
    cursor = json.loads(ingestion.services.poller_state.cursor("sms"))
    assert set(cursor) == {FAILURE_GROUP, SUCCESS_GROUP}
    # The next cycle re-reads the overlap but applies nothing again (no event writes at all:
    # its only writes are the poller's own cursor and watermarks)
    clock.advance(30)
    with observing(WrittenKeys()) as written:
        again = ingestion.poll()
    assert again.applied == 0 and again.duplicates == 0
    assert written.partitions <= {"WM#sms", "WM#ses"}, written.partitions


class WrittenKeys(Observer):
    """The partitions of every item a write request names."""

    def __init__(self) -> None:
        self.partitions: set[str] = set()

    def before_parameter_build(self, **kwargs: Any) -> None:
        params = kwargs.get("params") or {}
        actions = [next(iter(a.values())) for a in params.get("TransactItems", [])] or [params]
        if kwargs["model"].name in ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"):
            for action in actions:
                key = action.get("Key") or action.get("Item") or {}
                self.partitions.add(str(key.get("pk", {}).get("S")))


def test_unknown_sms_is_resolved_by_a_status_record_for_the_destination(
    api, services, ingestion, clock, healthy_watermarks, monkeypatch
):
    from sendledger.domain.provider import CallResult, ProviderResponse

    real = services.sms.send_sms
    published = []

    def timeout_after_acceptance(message_id, to, content, category):
        published.append(real(message_id, to, content, category).provider_message_id)
        return ProviderResponse(CallResult.AMBIGUOUS, error_code="ReadTimeoutError")

    monkeypatch.setattr(services.sms, "send_sms", timeout_after_acceptance)
    body = {
        "channel": "sms",
        "to": "+12065550120",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "s"},
    }
    _, _, first = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "u-1"})
    assert first["state"] == "unknown" and first["provider_message_id"] is None
    # SNS logs the delivery under the id we never received
    record = sms_record(
        published[0], "+12065550120", "SUCCESS", "Message has been accepted by phone carrier", clock.now()
    )
    # No receipt under that id: the refused write, the number's recipient item, its last send
    # (no provider id recorded: the Publish timed out), the write
    with count_dynamodb_requests() as counter:
        deliver_subscription(ingestion, monkeypatch, SUCCESS_GROUP, [record])
    assert counter.operations == {"UpdateItem": 2, "BatchGetItem": 2}
    message = view(api, first["message_id"])
    assert message["state"] == "delivered" and message["provider_message_id"] == published[0]
    clock.advance(3600)
    ingestion.poll()
    assert len(sent_sms()) == 1


SUCCESS = ("SUCCESS", "Message has been accepted by phone carrier")
TRANSIENT = ("FAILURE", "Phone carrier is currently unreachable/unavailable")
PERMANENT = ("FAILURE", "Invalid phone number")
_numbers = iter(f"+120655501{n:02d}" for n in range(100))


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    failure=st.sampled_from([TRANSIENT, PERMANENT]),
    arrivals=st.lists(st.sampled_from(["success", "failure"]), min_size=1, max_size=6),
)
def test_status_records_in_any_order_and_multiplicity_converge(
    api, services, ingestion, clock, healthy_watermarks, failure, arrivals
):
    # Given an accepted SMS to a number of its own (one moto world serves every example), and its
    # receipt, which the publisher writes from the outcome's stream record
    number = next(_numbers)
    sent = send_sms(api, number, f"any-order-{number}")
    SmsReceiptItems(services.messages.table).write(
        AcceptedSms(sent["message_id"], sent["provider_message_id"], escalates=False)
    )
    records = {
        kind: sms_record(sent["provider_message_id"], number, *outcome, clock.now())
        for kind, outcome in (("success", SUCCESS), ("failure", failure))
    }
    # When its status records arrive in this order, repeated or not
    seen: set[str] = set()
    for kind in arrivals:
        report = IngestReport()
        with count_dynamodb_requests() as counter:
            ingest_log_record(services.sink, LogRecord(kind, 0, records[kind]), report)
        # Then each costs one write (a transaction when it suppresses the number too); only a
        # record weaker than one already applied costs a second (the refused one hands back the
        # receipt, history is written without the state)
        late = kind == "success" and "failure" in seen
        suppresses = kind == "failure" and failure == PERMANENT
        operation = "TransactWriteItems" if suppresses else "UpdateItem"
        assert counter.operations == {operation: 2 if late and kind not in seen else 1}
        assert report.duplicates == (1 if kind in seen else 0)
        seen.add(kind)
    # And the message ends in the strongest outcome, with one history entry per distinct record
    message = view(api, sent["message_id"])
    assert message["state"] == ("failed" if "failure" in seen else "delivered")
    events = sorted(entry["type"] for entry in message["history"] if entry["type"].startswith("event:"))
    assert events == sorted({"success": "event:SmsSuccess", "failure": "event:SmsFailure"}[k] for k in seen)
    # And the number is suppressed exactly when a permanent failure arrived
    assert suppressed(api, number) is ("failure" in seen and failure is PERMANENT)
