"""Test mode through the api handler and the poller against moto (issue #28 item 5).

A caller marked `test` sends nothing to any provider: the simulated carriers answer by the
simulator's rules and put the provider's own events, in each provider's shape, on test mode's own
queue (never the SES events queue nor the SMS delivery-status log groups), and the poller applies
them as it applies SES's and SNS's, in the test caller's namespace. Real callers' sends still go
to the provider, here SES and SNS played at the transport edge by the local simulator.
"""

from __future__ import annotations

import json

import boto3
import pytest

from sendledger import bootstrap
from sendledger.bootstrap import Runtime
from sendledger.domain.caller_settings import CALLER_SETTINGS_CACHE
from sendledger.domain.provider import Provider
from sendledger.providers.simulated.outcomes import envelope
from tests.conftest import TABLE
from tests.integration.conftest import FAILURE_GROUP, SUCCESS_GROUP, ses_record
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import ADMIN, caller_id
from tests.support.outbox import sent_emails, sent_sms
from tests.support.templates import warm_templates

TESTER = "arn:aws:iam::123456789012:role/tester-app"
BOUNCE = "bounce@simulator.amazonses.com"
INVALID_NUMBER = "+12065550165"  # 60-69: "Invalid phone number", which suppresses


@pytest.fixture
def tester(api, services: Runtime, ingestion, clock) -> str:
    """An admin marked TESTER test (the callers' admin route), and the simulated carriers are
    wired as bootstrap wires them, on the test clock."""
    status, _, view = api("PUT", f"/v1/admin/callers/{caller_id(TESTER)}", {"test_mode": True}, principal=ADMIN)
    assert status == 200 and view["test_mode"] is True, view
    services.simulated = bootstrap.simulated_carriers(services.settings, clock)
    return TESTER


def alert(to: str, channel: str = "email") -> dict:
    return {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def post(api, body: dict, key: str, principal: str | None = None):
    kwargs = {"principal": principal} if principal else {}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, **kwargs)


def shown(api, message_id: str, principal: str | None = None) -> dict:
    kwargs = {"principal": principal} if principal else {}
    status, _, view = api("GET", f"/v1/messages/{message_id}", **kwargs)
    assert status == 200
    return view


def suppressed(api, recipient: str) -> bool:
    status, _, view = api("GET", f"/v1/suppressions/{recipient.replace('@', '%40')}")
    assert status == 200
    return bool(view["suppressed"])


def recipient_items() -> list[str]:
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    return sorted(item["pk"]["S"] for item in items if item["pk"]["S"].startswith("SUP#"))


def test_a_test_callers_bounce_comes_through_ingestion_and_never_suppresses_the_real_recipient(
    api, simulator, ingestion, tester, healthy_watermarks
):
    # When the test caller sends to the bounce address
    status, _, view = post(api, alert(BOUNCE), "t-1", principal=tester)
    # Then nothing reached a provider, and the answer says test
    assert status == 202 and view["state"] == "accepted" and view["test"] is True and view["provider"] == "ses"
    assert sent_emails() == [] and simulator.outbox() == []
    # And the poller ingests the simulated SES events from test mode's own queue
    ingestion.poll()
    found = shown(api, view["message_id"], tester)
    assert found["state"] == "bounced" and found["test"] is True
    types = [entry["type"] for entry in found["history"]]  # both events applied in one cycle, at one instant
    assert types[:2] == ["intent", "provider_outcome"] and sorted(types[2:]) == ["event:Bounce", "event:Send"]
    assert all(entry["test"] is True for entry in found["history"])
    # The replay says test too
    _, headers, replayed = post(api, alert(BOUNCE), "t-1", principal=tester)
    assert headers["idempotent-replayed"] == "true" and replayed["test"] is True
    # The suppression is the test caller's own: the real recipient is not suppressed
    assert not suppressed(api, BOUNCE)
    assert recipient_items() == [f"SUP#test:{caller_id(tester)}:email:{BOUNCE}"]
    # And a real caller's send to the same address goes to the real provider (SES, at the edge)
    status, _, real = post(api, alert(BOUNCE), "r-1")
    assert status == 202 and real["state"] == "accepted" and "test" not in real
    assert [entry["to"] for entry in simulator.outbox()] == [BOUNCE] and len(sent_emails()) == 1
    simulator.flush()
    ingestion.poll()
    real_found = shown(api, real["message_id"])
    assert real_found["state"] == "bounced" and "test" not in real_found
    assert not any("test" in entry for entry in real_found["history"])
    assert suppressed(api, BOUNCE)  # the real bounce suppresses the real recipient, as ever


def test_a_real_suppression_does_not_decide_a_test_outcome(api, simulator, ingestion, tester, healthy_watermarks):
    status, _, _ = api("PUT", "/v1/admin/suppressions/carol%40example.com", {"reason": "asked"}, principal=ADMIN)
    assert status == 200 and post(api, alert("carol@example.com"), "r-carol")[2]["state"] == "suppressed"
    _, _, view = post(api, alert("carol@example.com"), "t-carol", principal=tester)
    assert view["state"] == "accepted" and view["test"] is True  # simulated, not suppressed
    ingestion.poll()
    assert shown(api, view["message_id"], tester)["state"] == "delivered"
    assert simulator.outbox() == []


def test_a_test_callers_sms_failure_comes_through_test_modes_own_queue(
    api, simulator, ingestion, tester, healthy_watermarks
):
    status, _, view = post(api, alert(INVALID_NUMBER, "sms"), "t-sms", principal=tester)
    assert status == 202 and view["test"] is True and view["provider"] == "sns"
    assert sent_sms() == [] and simulator.outbox() == []
    # Nothing was written where SNS writes its records, nor on the SES events queue
    logs = boto3.client("logs")
    for group in (SUCCESS_GROUP, FAILURE_GROUP):
        assert logs.filter_log_events(logGroupName=group)["events"] == []
    assert ingestion.queue_depth() == 0
    ingestion.poll()  # the poller drains test mode's queue (the SMS status record, as SNS logs it)
    found = shown(api, view["message_id"], tester)
    assert found["state"] == "failed" and all(entry["test"] is True for entry in found["history"])
    assert found["history"][-1]["type"] == "event:SmsFailure"
    assert not suppressed(api, INVALID_NUMBER)
    assert recipient_items() == [f"SUP#test:{caller_id(tester)}:sms:{INVALID_NUMBER}"]


def test_timeout_lost_is_resent_after_proven_absence_and_still_reaches_no_provider(
    api, services, simulator, ingestion, tester, clock, healthy_watermarks
):
    _, _, view = post(api, alert("dave+timeout-lost@example.com"), "t-lost", principal=tester)
    assert view["state"] == "unknown"
    for _ in range(4):  # the SES watermark passes the send plus the grace: absence proven, resent
        clock.advance(services.settings.unknown_grace_seconds / 2)
        ingestion.poll()
    found = shown(api, view["message_id"], tester)
    assert found["state"] == "delivered" and [e["type"] for e in found["history"]].count("resend") == 1
    assert sent_emails() == [] and simulator.outbox() == []


def test_the_settings_are_read_once_per_caller_container_and_cache_period(api, services, clock, warm_watermarks):
    """The one DynamoDB request test mode adds to a real caller's send path, measured."""
    services.caller_settings.clock = clock  # type: ignore[attr-defined]  # the cache ages with the test's clock
    warm_templates(api)  # the template lookup's own read is measured in test_templates.py
    with count_dynamodb_requests() as first:
        post(api, alert("a1@example.com"), "c-1")
    with count_dynamodb_requests() as warm:
        for number in range(2, 6):
            post(api, alert(f"a{number}@example.com"), f"c-{number}")
    clock.advance(CALLER_SETTINGS_CACHE.total_seconds() + 1)
    services.poller_state.recent_watermark("ses", clock.now())  # its own cache period: not this test's
    with count_dynamodb_requests() as expired:
        post(api, alert("a6@example.com"), "c-6")
    assert first.operations == {"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 1}
    assert warm.operations == {"TransactWriteItems": 4, "UpdateItem": 4}  # 2 per send: the budget
    assert expired.operations == first.operations


def test_the_test_outcomes_queue_applies_nothing_that_is_not_a_test_callers(
    api, services, simulator, ingestion, tester, clock, healthy_watermarks
):
    """Whoever can write test mode's queue (the api's role) can touch test namespaces only: a real
    send's bounce put there, in the envelope the outlet uses, is refused and left for the DLQ."""
    status, _, real = post(api, alert("erin@example.com"), "r-erin")
    assert status == 202 and "test" not in real
    bounce = ses_record("Bounce", real["message_id"], "erin@example.com", clock.now(), real["provider_message_id"])
    sqs = boto3.client("sqs")
    sqs.send_message(QueueUrl=ingestion.test_outcomes_url, MessageBody=envelope(Provider.SES, json.dumps(bounce)))
    # And with a simulated provider id, the real message named by its tag: the id lacks its seal
    forged_id = f"sendledger-test.{caller_id(tester)}.{'0' * 48}"
    bounce["mail"]["messageId"] = forged_id
    sqs.send_message(QueueUrl=ingestion.test_outcomes_url, MessageBody=envelope(Provider.SES, json.dumps(bounce)))
    report = ingestion.poll()
    assert report.poison == 2 and report.applied == 0 and not suppressed(api, "erin@example.com")
    assert shown(api, real["message_id"])["state"] == "accepted"
