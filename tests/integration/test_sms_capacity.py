"""What an SMS send and its status record write, in requests and write units as DynamoDB bills
them (counted: deterministic). The send is at the email budget: its outcome is one UpdateItem
on the message, and the receipt a status record lands on (SNS's message id to ours) is the
publisher's, written from the outcome's stream record, off the API path.
"""

from datetime import timedelta

import pytest

from benchmarks.counting import counting
from sendledger.adapters.dynamodb.keys import RECEIPT_SK, receipt_pk
from sendledger.domain.errors import DependencyUnavailable
from sendledger.ports.log_subscription import LogRecord
from sendledger.providers.sns.lane import ingest_log_record
from sendledger.usecases.ingest import SMS_RECEIPT_LAG_SECONDS, IngestReport
from tests.integration.conftest import sms_record
from tests.support.status_out import status_out_harness

PHONE = "+12065550120"
SUMMARY = "Disk usage on db-primary-03 passed 90 %: 912 GB of 1 TB used, growing 4 GB an hour"


def send(api, key):
    body = {"channel": "sms", "to": PHONE, "template": {"id": "alert", "version": "1"}, "params": {"summary": SUMMARY}}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})


def units(log):
    return sum(r.capacity["write_request_units"] for r in log.requests)


def receipt(services, provider_message_id):
    return services.messages.table.get(receipt_pk(provider_message_id), RECEIPT_SK)


def apply(services, record, report=None):
    ingest_log_record(services.sink, LogRecord("1", 0, record), report or IngestReport())


@pytest.fixture
def pump(services):
    return status_out_harness(services.settings)[0]


def test_an_sms_send_is_two_requests_and_eight_units_and_its_receipt_is_the_publishers(
    api, services, pump, warm_watermarks, warm_caller_settings, warm_templates
):
    # When an SMS is sent (by a busy container: it looked the caller's template up within its cache period)
    with counting(services.messages) as log:
        status, _, view = send(api, "9f0c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f")
    # Then the intent's transaction (2 items x 2 units, and its evidence and due-work index entries)
    # and the outcome's UpdateItem (1, and the due-work entry's removal), as an email's: no receipt here
    assert status == 202 and view["state"] == "accepted"
    assert log.summary() == ["TransactWriteItems(2)/200", "UpdateItem(1)/200"] and units(log) == 8
    assert receipt(services, view["provider_message_id"]) is None
    # And the publisher writes the receipt from the outcome's stream record: one UpdateItem, one unit
    with counting(services.messages) as publishing:
        pump.pump()
    writes = [r for r in publishing.requests if r.operation == "UpdateItem" and "PMID#" in str(r.params["Key"])]
    assert len(writes) == 1 and writes[0].capacity["write_request_units"] == 1
    written = receipt(services, view["provider_message_id"])
    assert written["message_id"]["S"] == view["message_id"] and written["escalates"] == {"BOOL": False}


def test_a_status_record_on_the_publishers_receipt_is_one_write_of_one_unit(
    api, services, pump, clock, healthy_watermarks
):
    _, _, view = send(api, "s-1")
    pump.pump()
    record = sms_record(view["provider_message_id"], PHONE, "SUCCESS", "Message has been accepted", clock.now())
    with counting(services.messages) as new:
        apply(services, record)
    assert new.summary() == ["UpdateItem(1)/200"] and units(new) == 1
    with counting(services.messages) as duplicate:
        apply(services, record)
    assert duplicate.summary() == ["UpdateItem(1)/400"]
    assert api("GET", f"/v1/messages/{view['message_id']}")[2]["state"] == "delivered"


def test_a_status_record_before_the_receipt_finds_its_send_and_the_publishers_write_merges(
    api, services, pump, clock, healthy_watermarks
):
    # Given two SMS to one number, and no receipt written yet (the publisher is behind)
    _, _, first = send(api, "s-1")
    clock.advance(10)
    _, _, second = send(api, "s-2")
    clock.advance(5)
    failure = "Phone carrier is currently unreachable/unavailable"
    record = sms_record(first["provider_message_id"], PHONE, "FAILURE", failure, clock.now())
    # When the first one's status record arrives: refused on the missing receipt, then the number's
    # last two sends read, the first names the record's id, and the record writes its receipt
    with counting(services.messages) as early:
        apply(services, record)
    assert early.summary() == ["UpdateItem(1)/400", "BatchGetItem(1)/200", "BatchGetItem(1)/200", "UpdateItem(1)/200"]
    # Then the publisher's write merges with it: the record's state and entry stay, its duplicate is refused
    pump.pump()
    assert receipt(services, first["provider_message_id"])["message_id"]["S"] == first["message_id"]
    with counting(services.messages) as again:
        apply(services, record)
    assert again.summary() == ["UpdateItem(1)/400"]
    shown = {m["message_id"]: api("GET", f"/v1/messages/{m['message_id']}")[2] for m in (first, second)}
    assert shown[first["message_id"]]["state"] == "failed" and shown[second["message_id"]]["state"] == "accepted"
    assert [e["type"] for e in shown[first["message_id"]]["history"]].count("event:SmsFailure") == 1


def test_a_status_record_no_recent_send_names_is_retried_while_a_receipt_may_come_then_kept_unmatched(
    api, services, clock, healthy_watermarks
):
    _, _, sent = send(api, "s-1")
    stray = sms_record("not-one-of-ours", PHONE, "SUCCESS", "Message has been accepted", clock.now())
    # A send to the number moments ago whose receipt is not written: the record is not guessed onto it
    with pytest.raises(DependencyUnavailable):
        apply(services, stray)
    assert api("GET", f"/v1/messages/{sent['message_id']}")[2]["state"] == "accepted"
    # Once no receipt can still come, the record is kept as a stray one (its dedupe), on no message
    clock.advance(SMS_RECEIPT_LAG_SECONDS + 1)
    report = IngestReport()
    apply(services, stray, report)
    assert report.applied == 1 and api("GET", f"/v1/messages/{sent['message_id']}")[2]["state"] == "accepted"
    clock.advance(timedelta(minutes=1).total_seconds())
    again = IngestReport()
    apply(services, stray, again)
    assert again.duplicates == 1
