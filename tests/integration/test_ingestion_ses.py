"""SES events: SES → SNS → SQS → poller → ledger, against moto, through the real adapters."""

import json

import boto3
import pytest

from sendledger import bootstrap
from sendledger.adapters.dynamodb.keys import recipient_pk as sup_pk
from sendledger.handlers import poller
from sendledger.providers.ses.events import parse_sqs_body
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.poll import CycleFailed
from tests.conftest import TABLE
from tests.integration.conftest import fixture, ses_record
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import FakeLambdaContext, lane_named
from tests.support.fixtures import ingest_sqs_body
from tests.support.outbox import sent_emails

ALICE = "alice@example.com"


def send(api, to=ALICE, key="k-1"):
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})
    assert status == 202
    return view


def message(api, message_id):
    return api("GET", f"/v1/messages/{message_id}")[2]


def suppression(api, recipient=ALICE):
    return api("GET", f"/v1/suppressions/{recipient}")[2]


def admin_suppression(api, recipient=ALICE):
    return api("GET", f"/v1/admin/suppressions/{recipient}")[2]


def envelope(record):
    """The SQS body SNS delivers (what the poller reads)."""
    body = fixture("sqs-body-sns-envelope-ses-bounce.json")
    body["Message"] = json.dumps(record)
    return json.dumps(body)


def event_entries(view):
    return [entry for entry in view["history"] if entry["type"].startswith("event:")]


@pytest.fixture
def sent(api, ingestion, clock, healthy_watermarks):
    view = send(api)
    clock.advance(2)
    return view


def test_delivery_moves_accepted_to_delivered(api, ingestion, clock, sent):
    ingestion.publish(ses_record("Send", sent["message_id"], ALICE, clock.now(), sent["provider_message_id"]))
    ingestion.publish(ses_record("Delivery", sent["message_id"], ALICE, clock.now(), sent["provider_message_id"]))
    report = ingestion.poll()
    assert report.applied == 2 and report.read_to_end["ses"]
    view = message(api, sent["message_id"])
    assert view["state"] == "delivered"
    # (same fake millisecond: history order within it is not defined)
    assert sorted(e["type"] for e in event_entries(view)) == ["event:Delivery", "event:Send"]
    assert event_entries(view)[-1]["event_age_seconds"] == 0.0
    assert ingestion.queue_depth() == 0
    assert ALICE not in json.dumps(view["history"])


def test_permanent_bounce_suppresses_and_the_next_send_is_suppressed(api, ingestion, clock, sent):
    ingestion.publish(ses_record("Bounce", sent["message_id"], ALICE, clock.now()))
    clock.advance(3)
    report = ingestion.poll()
    assert report.suppressed == 1
    lag = [m for m in report.metrics if m.name == "EventToSuppressionLagMs"]
    assert lag and lag[0].value == 3000.0
    assert message(api, sent["message_id"])["state"] == "bounced"
    state = suppression(api)
    assert state["suppressed"] is True and state["version"] == 1 and state["reason_class"] == "bounce"
    # the caller's own message caused it: its entry is in the caller's view, naming the message
    assert state["history"][-1]["type"] == "suppressed" and state["history"][-1]["source"] == "ses"
    assert state["history"][-1]["message_id"] == sent["message_id"]
    assert admin_suppression(api)["reason"] == "bounce: Permanent/General"
    # When the app sends to the address again
    again = send(api, key="k-2")
    assert again["state"] == "suppressed"
    assert len(sent_emails()) == 1


def test_complaint_suppresses_and_wins_over_bounce(api, ingestion, clock, sent):
    mid = sent["message_id"]
    ingestion.publish(ses_record("Delivery", mid, ALICE, clock.now()))
    ingestion.publish(ses_record("Complaint", mid, ALICE, clock.now()))
    ingestion.poll()
    assert message(api, mid)["state"] == "complained"
    assert suppression(api)["version"] == 1
    # A late permanent bounce of the same message: no regression, suppression not bumped
    clock.advance(1)
    ingestion.publish(ses_record("Bounce", mid, ALICE, clock.now()))
    ingestion.poll()
    view = message(api, mid)
    assert view["state"] == "complained"
    assert event_entries(view)[-1]["state_unchanged"] == "complained"
    assert suppression(api)["version"] == 1


def test_delivered_after_bounced_stays_bounced(api, ingestion, clock, sent):
    mid = sent["message_id"]
    ingestion.publish(ses_record("Bounce", mid, ALICE, clock.now()))
    ingestion.poll()
    clock.advance(1)
    ingestion.publish(ses_record("Delivery", mid, ALICE, clock.now()))
    ingestion.poll()
    view = message(api, mid)
    assert view["state"] == "bounced"
    assert [e["type"] for e in event_entries(view)] == ["event:Bounce", "event:Delivery"]


def test_reject_and_delivery_delay(api, ingestion, clock, sent):
    mid = sent["message_id"]
    ingestion.publish(ses_record("DeliveryDelay", mid, ALICE, clock.now()))
    ingestion.poll()
    assert message(api, mid)["state"] == "accepted"
    ingestion.publish(ses_record("Reject", mid, ALICE, clock.now()))
    ingestion.poll()
    view = message(api, mid)
    assert view["state"] == "rejected"
    assert suppression(api)["suppressed"] is False


def test_transient_bounces_suppress_at_the_third_within_seven_days(api, ingestion, clock, healthy_watermarks):
    for index in range(3):
        view = send(api, key=f"t-{index}")
        ingestion.publish(ses_record("TransientBounce", view["message_id"], ALICE, clock.now(), f"ses-{index}"))
        ingestion.poll()
        assert message(api, view["message_id"])["state"] == "bounced"
        assert suppression(api)["suppressed"] is (index == 2)
        clock.advance(2 * 86_400)
    assert suppression(api)["reason_class"] == "bounce"
    assert admin_suppression(api)["reason"] == "bounce: Transient/MailboxFull"


def test_transient_bounces_spread_out_do_not_suppress(api, ingestion, clock, healthy_watermarks):
    for index in range(3):
        view = send(api, key=f"t-{index}")
        ingestion.publish(ses_record("TransientBounce", view["message_id"], ALICE, clock.now(), f"ses-{index}"))
        ingestion.poll()
        clock.advance(4 * 86_400)
    assert suppression(api)["suppressed"] is False


def test_new_event_costs_one_request_and_duplicate_one_with_no_change(api, services, ingestion, clock, sent):
    body = envelope(ses_record("Bounce", sent["message_id"], ALICE, clock.now()))
    with count_dynamodb_requests() as counter:
        ingest_sqs_body(services.sink, body, IngestReport())
    assert counter.total == 1, counter.operations
    assert counter.operations == {"TransactWriteItems": 1}
    before = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    clock.advance(5)
    report = IngestReport()
    with count_dynamodb_requests() as counter:
        ingest_sqs_body(services.sink, body, report)
    assert counter.total == 1 and report.duplicates == 1
    assert boto3.client("dynamodb").scan(TableName=TABLE)["Items"] == before
    # The usual Send event after the send path recorded `accepted` is one request too
    other = send(api, to="bob@example.com", key="k-bob")
    body = envelope(ses_record("Send", other["message_id"], "bob@example.com", clock.now(), "ses-bob"))
    with count_dynamodb_requests() as counter:
        ingest_sqs_body(services.sink, body, IngestReport())
    assert counter.total == 1


def test_events_of_two_provider_message_ids_on_one_receipt_keep_their_own_event_ids(api, ingestion, clock, sent):
    """A resend's events land on the receipt of the same message under another SES message id:
    each entry still names its own event (an entry stores an event id relative to the receipt's
    provider id only when it is that id)."""
    first, second = sent["provider_message_id"], "ses-resend-attempt"
    ingestion.publish(ses_record("Send", sent["message_id"], ALICE, clock.now(), first))
    ingestion.poll()
    clock.advance(1)
    ingestion.publish(ses_record("Send", sent["message_id"], ALICE, clock.now(), second))
    ingestion.publish(ses_record("Delivery", sent["message_id"], ALICE, clock.now(), second))
    report = ingestion.poll()
    assert report.applied == 2
    view = message(api, sent["message_id"])
    assert view["state"] == "delivered"
    named = sorted(tuple(e["event_id"].split("#")[:2]) for e in event_entries(view))
    assert named == sorted([(first, "Send"), (second, "Send"), (second, "Delivery")]), named


def test_replayed_batch_changes_nothing(api, ingestion, clock, sent):
    mid = sent["message_id"]
    records = [ses_record(kind, mid, ALICE, clock.now()) for kind in ("Send", "Delivery", "Complaint")]
    for record in records:
        ingestion.publish(record)
    ingestion.poll()
    first = message(api, mid)
    for record in records:  # SNS/SQS at-least-once: the whole batch again
        ingestion.publish(record)
    report = ingestion.poll()
    assert report.duplicates == 3 and report.applied == 0
    assert message(api, mid) == first
    assert suppression(api)["version"] == 1


def test_poller_stopped_mid_batch_loses_nothing_and_applies_nothing_twice(
    api, ingestion, clock, healthy_watermarks, monkeypatch
):
    views = [send(api, to=f"user{index}@example.com", key=f"m-{index}") for index in range(4)]
    for index, view in enumerate(views):
        ingestion.publish(
            ses_record("Bounce", view["message_id"], f"user{index}@example.com", clock.now(), f"s{index}")
        )
    queue = lane_named(ingestion.services, "ses").queue
    real_delete = queue.delete
    calls = []

    def crash_before_delete(messages):
        calls.append(len(messages))
        raise RuntimeError("Lambda timed out before DeleteMessageBatch")

    monkeypatch.setattr(queue, "delete", crash_before_delete)
    with pytest.raises(CycleFailed) as failed:
        ingestion.poll()
    assert failed.value.report.applied == 4 and not failed.value.report.read_to_end["ses"]
    monkeypatch.setattr(queue, "delete", real_delete)
    # Rerun: every message comes back, each is a duplicate, then all are deleted
    report = ingestion.poll()
    assert report.duplicates == 4 and report.applied == 0 and report.read_to_end["ses"]
    assert ingestion.queue_depth() == 0
    for index, view in enumerate(views):
        assert message(api, view["message_id"])["state"] == "bounced"
        assert len(event_entries(message(api, view["message_id"]))) == 1
        assert suppression(api, f"user{index}@example.com")["version"] == 1


def test_poison_message_is_left_for_the_dlq_and_holds_the_watermark(api, services, ingestion, clock, sent):
    watermark_before = services.poller_state.watermark("ses")
    ingestion.enqueue_raw("this is not an SES event")
    ingestion.publish(ses_record("Delivery", sent["message_id"], ALICE, clock.now()))
    clock.advance(60)
    report = ingestion.poll()
    assert report.poison == 1 and report.applied == 1 and not report.read_to_end["ses"]
    assert message(api, sent["message_id"])["state"] == "delivered"
    assert ingestion.queue_depth() == 1  # only the poison message, for the redrive policy
    assert services.poller_state.watermark("ses") == watermark_before


def test_drained_queue_sets_the_watermark_to_the_cycle_start(services, ingestion, clock):
    clock.advance(100)
    started = clock.now()
    report = ingestion.poll()
    assert report.read_to_end["ses"] and services.poller_state.watermark("ses") == started
    ages = {m.dimensions.get("source"): m.value for m in report.metrics if m.name == "WatermarkAgeSeconds"}
    assert ages["ses"] == 0.0
    assert any(m.name == "UnknownBacklog" and m.value == 0 for m in report.metrics)


def test_event_without_our_message_still_suppresses(api, services, ingestion, clock, healthy_watermarks):
    ingestion.publish(ses_record("Complaint", None, "Carol@Example.com", clock.now()))
    report = ingestion.poll()
    assert report.unmatched == 1 and report.suppressed == 1
    assert suppression(api, "carol@example.com")["suppressed"] is True
    items = boto3.client("dynamodb").query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": sup_pk("email:carol@example.com")}},
    )["Items"]
    assert "Carol@Example.com" not in json.dumps(items)


def sqs_record(message_id, body):
    """One record of the SQS event a push-mode event source delivers."""
    return {
        "messageId": message_id,
        "receiptHandle": f"receipt-{message_id}",
        "body": body,
        "attributes": {},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
        "awsRegion": "us-east-1",
    }


def test_push_mode_reports_partial_batch_failures(api, ingestion, clock, sent, monkeypatch):

    monkeypatch.setattr(bootstrap, "runtime", lambda: ingestion.services)
    good = envelope(ses_record("Delivery", sent["message_id"], ALICE, clock.now()))
    event = {"Records": [sqs_record("m-good", good), sqs_record("m-bad", "garbage")]}
    response = poller.lambda_handler(event, FakeLambdaContext(function_name="sendledger-poller"))
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-bad"}]}
    assert message(api, sent["message_id"])["state"] == "delivered"


def test_scheduled_poller_handler_runs_one_cycle(ingestion, monkeypatch):

    monkeypatch.setattr(bootstrap, "runtime", lambda: ingestion.services)
    scheduled = {"version": "0", "detail-type": "Scheduled Event", "source": "aws.events", "detail": {}}
    response = poller.lambda_handler(scheduled, FakeLambdaContext(function_name="sendledger-poller"))
    # Test mode's lane is a side path: it never proves a provider's absence (no watermark).
    assert response["read_to_end"] == {"ses": True, "sms": True, "test-outcomes": False}


def test_every_fixture_is_ingestible(services, ingestion):
    body = json.dumps(fixture("sqs-body-sns-envelope-ses-bounce.json"))
    [event] = parse_sqs_body(body)
    report = IngestReport()
    ingest_sqs_body(services.sink, body, report)
    # The fixture's message id is not ours: no message reads its receipt; suppression still lands
    assert report.applied == 1 and report.suppressed == 1
    assert services.messages.get(event.message_id) is None


def test_push_mode_watermark_waits_for_messages_the_event_source_holds(services, ingestion, clock):
    import boto3

    services.settings = services.settings.replace({"ingestion_mode": "push"})
    before = services.poller_state.watermark("ses")
    ingestion.enqueue_raw("held by the SQS event source")
    boto3.client("sqs").receive_message(QueueUrl=ingestion.queue_url, VisibilityTimeout=300)
    clock.advance(60)
    report = ingestion.poll()
    assert not report.read_to_end["ses"] and services.poller_state.watermark("ses") == before


def test_a_record_on_the_ses_queue_not_from_the_ses_topic_is_refused_and_logged_not_applied(
    api, ingestion, clock, sent, caplog
):
    """A principal with sqs:SendMessage on the queue (the queue's policy should keep it out) puts a
    well-formed bounce of Alice there, in an SNS envelope naming a topic of its own (issue #34)."""
    bounce = ses_record("Bounce", sent["message_id"], ALICE, clock.now(), sent["provider_message_id"])
    forged = json.loads(envelope(bounce))
    forged["TopicArn"] = ingestion.topic_arn.rsplit(":", 1)[0] + ":someone-elses-topic"
    ingestion.enqueue_raw(json.dumps(forged))
    del forged["TopicArn"]  # and one naming no topic at all
    ingestion.enqueue_raw(json.dumps(forged))
    ingestion.enqueue_raw(json.dumps(bounce))  # and the bare record (no envelope: no raw delivery here)
    caplog.clear()
    report = ingestion.poll()
    # Then none of it is applied: Alice is not suppressed, her message is still accepted
    assert report.applied == 0 and report.poison == 3
    assert suppression(api)["suppressed"] is False
    assert message(api, sent["message_id"])["state"] == "accepted"
    # And each is left for the DLQ (whose depth is alarmed) and logged with the topic it named
    assert ingestion.queue_depth() == 3
    refusals = [str(getattr(r, "error", "")) for r in caplog.records if r.levelname == "ERROR"]
    assert len(refusals) == 3 and all("not a notification of the SES events topic" in r for r in refusals)
    assert any("someone-elses-topic" in r for r in refusals)
    # While the same bounce from the configuration set's topic is applied
    ingestion.publish(bounce)
    assert ingestion.poll().applied == 1 and suppression(api)["suppressed"] is True
