"""Escalation: deadline (or earlier failure) → escalation queue + the next fallback, exactly once."""

import json

import pytest

from sendledger.adapters import aws as aws_clients
from sendledger.domain.messages import DueKind
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.poll import CycleFailed
from tests.integration.conftest import ses_record, sms_record
from tests.support.fixtures import ingest_sqs_body
from tests.support.outbox import sent_emails, sent_sms

ALICE = "alice@example.com"
ONCALL = "+12065550100"


def escalating_alert(deadline=300, fallback=None):
    return {
        "channel": "email",
        "to": ALICE,
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "db down"},
        "category": "alert",
        "escalation": {"deadline_seconds": deadline, "fallback": fallback or [{"channel": "sms", "to": ONCALL}]},
    }


def send_with_escalation(api, deadline=300, fallback=None):
    body = escalating_alert(deadline, fallback)
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "alert-1"})
    assert status == 202 and view["state"] == "accepted"
    return view


def view(api, message_id):
    return api("GET", f"/v1/messages/{message_id}")[2]


def test_not_delivered_by_the_deadline_escalates_once(api, ingestion, clock, healthy_watermarks):
    parent = send_with_escalation(api)
    clock.advance(120)
    assert ingestion.poll().escalated == 0  # before the deadline
    clock.advance(200)
    report = ingestion.poll()
    assert report.escalated == 1
    assert sent_sms() == [(ONCALL, "ALERT: db down")]
    message = view(api, parent["message_id"])
    assert message["state"] == "escalated"
    escalated = message["history"][-1]
    assert escalated["type"] == "escalated" and escalated["fallback_state"] == "accepted"
    [queued] = ingestion.escalations()
    assert queued["message"]["message_id"] == parent["message_id"] and queued["message"]["history"]
    assert ALICE not in str(queued)
    # The poller runs again: nothing more
    clock.advance(60)
    assert ingestion.poll().escalated == 0
    assert len(sent_sms()) == 1 and ingestion.escalations() == []
    fallback = view(api, escalated["fallback_message_id"])
    assert fallback["state"] == "accepted" and fallback["to"] == ONCALL


def test_crash_between_steps_still_sends_the_fallback_once(api, ingestion, clock, healthy_watermarks, monkeypatch):
    parent = send_with_escalation(api)
    clock.advance(301)
    timers = ingestion.services.escalation_timers
    real = timers.finish

    def crash(*args, **kwargs):
        raise RuntimeError("poller died after the fallback send")

    monkeypatch.setattr(timers, "finish", crash)
    with pytest.raises(CycleFailed):
        ingestion.poll()
    assert len(sent_sms()) == 1
    monkeypatch.setattr(timers, "finish", real)
    report = ingestion.poll()
    assert report.escalated == 1
    assert len(sent_sms()) == 1  # the rerun's fallback send was an idempotent replay
    assert view(api, parent["message_id"])["history"][-1]["fallback_replayed"] is True
    queued = ingestion.escalations()
    assert len({body["_deduplication_id"] for body in queued}) == 1  # at-least-once, one identity


def test_delivered_in_time_does_not_escalate(api, ingestion, clock, healthy_watermarks):
    parent = send_with_escalation(api)
    ingestion.publish(ses_record("Delivery", parent["message_id"], ALICE, clock.now()))
    ingestion.poll()
    clock.advance(400)
    assert ingestion.poll().escalated == 0
    assert sent_sms() == [] and ingestion.escalations() == []
    assert view(api, parent["message_id"])["state"] == "delivered"


def test_bounce_escalates_before_the_deadline(api, ingestion, clock, healthy_watermarks):
    parent = send_with_escalation(api, deadline=3600)
    ingestion.publish(ses_record("Bounce", parent["message_id"], ALICE, clock.now()))
    clock.advance(5)
    report = ingestion.poll()
    assert report.escalated == 1
    assert view(api, parent["message_id"])["state"] == "escalated"
    assert len(sent_sms()) == 1
    clock.advance(3600)
    assert ingestion.poll().escalated == 0 and len(sent_sms()) == 1


def sent_tags():
    """The EmailTags of every SendEmail the product makes from now on, as SES events carry them."""
    captured = []

    def record(params, **_):
        tags = {}
        for tag in params.get("EmailTags", []):
            tags.setdefault(tag["Name"], []).append(tag["Value"])
        captured.append(tags)

    aws_clients.client("sesv2").meta.events.register("before-parameter-build.sesv2.SendEmail", record)
    return captured


@pytest.mark.parametrize("escalates", [False, True])
def test_a_failure_leaves_a_marker_for_the_poller_only_when_the_message_escalates(
    api, ingestion, clock, healthy_watermarks, escalates
):
    tags = sent_tags()
    body = escalating_alert(deadline=3600)
    if not escalates:
        body.pop("escalation")
    sent = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "alert-1"})[2]
    record = ses_record("Bounce", sent["message_id"], ALICE, clock.now())
    record["mail"]["tags"] = tags[-1]  # what the send told SES comes back on its events
    ingest_sqs_body(ingestion.services.sink, json.dumps(record), IngestReport())
    assert view(api, sent["message_id"])["state"] == "bounced"
    assert ingestion.services.due_work.count(DueKind.OUTCOME) == (1 if escalates else 0)
    clock.advance(5)
    assert ingestion.poll().escalated == (1 if escalates else 0)


def test_fallback_chain_continues_through_the_same_mechanism(api, ingestion, clock, healthy_watermarks):
    send_with_escalation(
        api, fallback=[{"channel": "email", "to": "bob@example.com"}, {"channel": "sms", "to": ONCALL}]
    )
    clock.advance(301)
    ingestion.poll()
    assert len(sent_emails()) == 2 and sent_sms() == []
    clock.advance(301)
    assert ingestion.poll().escalated == 1
    assert sent_sms() == [(ONCALL, "ALERT: db down")]


def test_suppressed_at_send_escalates_at_once(api, ingestion, clock, healthy_watermarks):
    # Given the primary address is suppressed
    api("PUT", "/v1/admin/suppressions/alice%40example.com", {"reason": "hard bounce last week"})
    body = escalating_alert(deadline=3600)
    status, _, parent = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "alert-suppressed"})
    assert status == 202 and parent["state"] == "suppressed"
    # When the poller runs, long before the deadline
    clock.advance(5)
    assert ingestion.poll().escalated == 1
    # Then the fallback went out once
    assert view(api, parent["message_id"])["state"] == "escalated"
    assert len(sent_sms()) == 1 and sent_emails() == []


# --- an SMS primary: its outcome lands on the send's receipt ------------------------------------
PAGER = "+12065550120"


def send_sms_with_escalation(api, deadline=3600):
    body = {
        "channel": "sms",
        "to": PAGER,
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "db down"},
        "category": "alert",
        "escalation": {"deadline_seconds": deadline, "fallback": [{"channel": "email", "to": ALICE}]},
    }
    status, _, sent = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "page-1"})
    assert status == 202 and sent["state"] == "accepted"
    return sent


def apply_sms_record(ingestion, sent, status, response, at):
    from sendledger.ports.log_subscription import LogRecord
    from sendledger.providers.sns.lane import ingest_log_record
    from sendledger.usecases.ingest import IngestReport

    record = sms_record(sent["provider_message_id"], PAGER, status, response, at)
    ingest_log_record(ingestion.services.sink, LogRecord("1", 0, record), IngestReport())


def test_sms_failure_escalates_before_the_deadline(api, ingestion, clock, healthy_watermarks):
    # Given a paged SMS whose carrier failed it
    parent = send_sms_with_escalation(api)
    apply_sms_record(ingestion, parent, "FAILURE", "Phone carrier is currently unreachable/unavailable", clock.now())
    # When the poller runs, long before the deadline
    clock.advance(5)
    assert ingestion.poll().escalated == 1
    # Then the fallback mail went out once and the page reads escalated
    assert len(sent_emails()) == 1
    assert view(api, parent["message_id"])["state"] == "escalated"
    clock.advance(3600)
    assert ingestion.poll().escalated == 0 and len(sent_emails()) == 1


def test_sms_delivered_in_time_does_not_escalate(api, ingestion, clock, healthy_watermarks):
    parent = send_sms_with_escalation(api, deadline=300)
    apply_sms_record(ingestion, parent, "SUCCESS", "Message has been accepted by phone carrier", clock.now())
    clock.advance(400)
    assert ingestion.poll().escalated == 0
    assert sent_emails() == [] and ingestion.escalations() == []
    assert view(api, parent["message_id"])["state"] == "delivered"


def test_sms_delivered_while_escalating_is_not_claimed_escalated(
    api, ingestion, clock, healthy_watermarks, monkeypatch
):
    # Given the deadline passed without a status record
    parent = send_sms_with_escalation(api, deadline=300)
    clock.advance(301)
    timers = ingestion.services.escalation_timers
    real = timers.finish

    def delivered_meanwhile(*args, **kwargs):
        # the carrier's success lands between the poller's read and its final write
        apply_sms_record(ingestion, parent, "SUCCESS", "Message has been accepted by phone carrier", clock.now())
        return real(*args, **kwargs)

    monkeypatch.setattr(timers, "finish", delivered_meanwhile)
    ingestion.poll()
    # Then the page reads delivered, not escalated, and the escalation is on record
    message = view(api, parent["message_id"])
    assert message["state"] == "delivered"
    assert message["history"][-1]["type"] == "escalated" and len(sent_emails()) == 1
