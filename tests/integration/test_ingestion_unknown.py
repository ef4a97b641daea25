"""Due work: `unknown` sends resolved by evidence or proven absence, leases, `pending` retries."""

import re

import pytest

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.provider import CallResult, ProviderResponse
from tests.conftest import PRINCIPAL
from tests.integration.conftest import ses_record
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import caller_id
from tests.support.outbox import sent_emails

ALICE = "alice@example.com"
LINK = re.compile(r"reset\?token=([A-Za-z0-9_-]+)")


def send(api, key="k-1"):
    body = {"channel": "email", "to": ALICE, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})


def view(api, message_id):
    return api("GET", f"/v1/messages/{message_id}")[2]


@pytest.fixture
def faults(services, monkeypatch):
    """Make the next SES calls time out: `accepted` (SES has it) or `lost` (it never arrived)."""
    real = services.email.send_email
    plan = []

    def send_email(message_id, to, content, *, escalates):
        fault = plan.pop(0) if plan else None
        if fault == "accepted":
            real(message_id, to, content, escalates=escalates)
        if fault in ("accepted", "lost"):
            return ProviderResponse(CallResult.AMBIGUOUS, error_code="ReadTimeoutError")
        if fault == "throttled":
            return ProviderResponse(CallResult.THROTTLED, error_code="Throttling")
        return real(message_id, to, content, escalates=escalates)

    monkeypatch.setattr(services.email, "send_email", send_email)
    return plan


def test_send_event_proves_acceptance_and_nothing_is_resent(api, ingestion, clock, faults, healthy_watermarks):
    faults.append("accepted")
    _, _, first = send(api)
    assert first["state"] == "unknown"
    ingestion.publish(ses_record("Send", first["message_id"], ALICE, clock.now()))
    clock.advance(61)
    ingestion.poll()
    message = view(api, first["message_id"])
    assert message["state"] == "accepted"
    assert message["reason"] is None, "the timeout no longer explains an accepted message"
    assert any(e.get("provider_error") == "ReadTimeoutError" for e in message["history"]), "evidence kept"
    clock.advance(2000)
    report = ingestion.poll()
    # The evidence landed on the send's receipt: the poller finds the unknown marker, reads the
    # message as accepted and drops the marker, sending nothing
    assert report.resolved == {"unknown_already_resolved": 1}
    assert len(sent_emails()) == 1


def test_absence_proven_after_the_watermark_passes_resends_once_with_the_same_id(
    api, ingestion, clock, faults, healthy_watermarks
):
    faults.append("lost")
    _, _, first = send(api)
    clock.advance(61)
    report = ingestion.poll()
    # Absence cannot be proven before send time + grace: the unknown is not even due yet
    assert report.resolved == {}
    assert view(api, first["message_id"])["state"] == "unknown" and sent_emails() == []
    clock.advance(900)
    report = ingestion.poll()
    assert report.resolved == {"absence_proven": 1, "resent_accepted": 1}
    message = view(api, first["message_id"])
    assert message["state"] == "accepted" and message["provider_message_id"]
    types = [entry["type"] for entry in message["history"]]
    # (one fake millisecond: the first two are unordered between themselves)
    assert types[-1] == "provider_outcome" and set(types[-3:-1]) == {"absence_proven", "resend"}
    assert next(e for e in message["history"] if e["type"] == "resend")["attempt"] == 2
    # Exactly one accepted send, and the client's retry now sees it
    ingestion.poll()
    assert len(sent_emails()) == 1
    _, headers, replay = send(api)
    assert replay["message_id"] == first["message_id"] and replay["state"] == "accepted"
    assert headers["idempotent-replayed"] == "true"


def test_watermark_behind_stays_unknown_then_unresolved(api, ingestion, clock, faults, healthy_watermarks):
    stuck, others = ingestion.services, ingestion.services.lanes_for
    # The SES queue is never drained.
    stuck.lanes_for = lambda settings, stores: [lane for lane in others(settings, stores) if lane.source != "ses"]
    faults.append("lost")
    _, _, first = send(api)
    clock.advance(2000)

    report = stuck.poll_cycle.run(lambda: 300.0)
    assert report.resolved == {"unknown_waiting": 1}
    assert [m.value for m in report.metrics if m.name == "UnknownBacklog"] == [1.0]
    clock.advance(86_400)
    report = stuck.poll_cycle.run(lambda: 300.0)
    assert report.resolved == {"unresolved": 1}
    assert view(api, first["message_id"])["state"] == "unresolved"
    assert sent_emails() == []


def test_crash_between_intent_and_outcome_becomes_unknown_after_the_lease(
    api, services, ingestion, clock, healthy_watermarks, monkeypatch
):
    def crash(outcome):
        raise DependencyUnavailable("Lambda died before the outcome write")

    real = services.messages.record_outcome
    monkeypatch.setattr(services.messages, "record_outcome", crash)
    status, _, _ = send(api)
    assert status == 503
    monkeypatch.setattr(services.messages, "record_outcome", real)
    [mail] = sent_emails()
    clock.advance(61)
    report = ingestion.poll()
    assert report.resolved == {"lease_expired": 1, "unknown_waiting": 1}
    # The SES Send event (tagged with the message id) then proves acceptance
    message_id = next(iter(view_ids(services)))
    ingestion.publish(ses_record("Send", message_id, ALICE, clock.now()))
    ingestion.poll()
    assert view(api, message_id)["state"] == "accepted"
    assert len(sent_emails()) == 1 and mail


def view_ids(services):
    import boto3

    from tests.conftest import TABLE

    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    return {item["pk"]["S"].removeprefix("MSG#") for item in items if item["sk"]["S"] == "MSG"}


def test_pending_send_is_retried_by_the_poller(api, ingestion, clock, faults, healthy_watermarks):
    faults.extend(["throttled"] * 4)
    _, _, first = send(api)
    assert first["state"] == "pending"
    clock.advance(61)
    report = ingestion.poll()
    assert report.resolved == {"resent_accepted": 1}
    assert view(api, first["message_id"])["state"] == "accepted"
    assert len(sent_emails()) == 1


def test_pending_send_to_a_recipient_suppressed_meanwhile_is_not_sent(
    api, ingestion, clock, faults, healthy_watermarks
):
    faults.extend(["throttled"] * 4)
    _, _, first = send(api)
    api("PUT", f"/v1/admin/suppressions/{ALICE}", {"reason": "user asked"})
    clock.advance(61)
    ingestion.poll()
    assert view(api, first["message_id"])["state"] == "suppressed"
    assert sent_emails() == []


def test_reset_resend_after_proven_absence_leaves_one_valid_token(
    api, services, ingestion, clock, faults, healthy_watermarks
):
    services.settings = services.settings.replace({"unknown_grace_seconds": 60})
    # SES accepted the reset mail but the call timed out, and its events were lost
    faults.append("accepted")
    status, _, reset = api("POST", "/v1/password-resets", {"account_id": "acct-1", "email": ALICE})
    assert status == 202
    first_mail = ingestion.poll()  # the first mail: minted and sent by the poller
    clock.advance(121)
    second_mail = ingestion.poll()
    # Counted apart: the first mail is no resend, the proven-absent one's new token is
    assert first_mail.resolved == {"reset_sent": 1}
    assert second_mail.resolved.get("reset_resent") == 1 and "reset_sent" not in second_mail.resolved
    first_token, second_token = (LINK.search(mail.body).group(1) for mail in sent_emails())
    assert first_token != second_token
    consume = {"account_id": "acct-1"}
    assert api("POST", "/v1/password-resets/consume", {**consume, "token": first_token})[0] == 400
    status, _, body = api("POST", "/v1/password-resets/consume", {**consume, "token": second_token})
    assert status == 200 and body["reset_id"] == reset["reset_id"]


def test_late_evidence_of_the_first_attempt_stops_a_queued_retry(api, ingestion, clock, faults, healthy_watermarks):
    # Attempt 1 reached SES but timed out, and its events are late; the resend is throttled
    faults.extend(["accepted", "throttled", "throttled", "throttled", "throttled"])
    _, _, first = send(api)
    clock.advance(1000)
    ingestion.poll()
    assert view(api, first["message_id"])["state"] == "pending"
    # Then SES's Send event for attempt 1 arrives: it was accepted after all
    ingestion.publish(ses_record("Send", first["message_id"], ALICE, clock.now()))
    clock.advance(120)
    ingestion.poll()
    assert view(api, first["message_id"])["state"] == "accepted"
    clock.advance(120)
    ingestion.poll()
    assert len(sent_emails()) == 1


def test_replay_is_the_stored_answer_and_the_message_view_has_the_resolution(
    api, services, ingestion, clock, faults, healthy_watermarks
):
    # Given a timed-out send that SES had accepted, resolved by its Send event
    faults.append("accepted")
    _, _, first = send(api)
    ingestion.publish(ses_record("Send", first["message_id"], ALICE, clock.now()))
    clock.advance(61)
    ingestion.poll()
    services.caller_settings.get(caller_id(PRINCIPAL))  # a busy container read its settings just now
    # When the client retries the POST, it gets the stored answer for one request
    with count_dynamodb_requests() as counter:
        status, headers, replay = send(api)
    assert status == 202 and headers["idempotent-replayed"] == "true" and replay == first
    assert counter.total == 1
    # And the message view has the resolution; nothing was sent twice
    assert view(api, first["message_id"])["state"] == "accepted" and len(sent_emails()) == 1


def test_deferred_by_stale_policy_is_sent_by_the_poller(api, services, ingestion, clock, healthy_watermarks):
    # Given the policy defers sends whose recipient's last outcome is not yet knowable
    services.settings = services.settings.replace(
        {"stale_eligibility_policy": dict.fromkeys(("transactional", "alert", "security"), "defer")}
    )
    send(api, key="first")
    clock.advance(30)
    status, headers, deferred = send(api, key="second")
    assert status == 202 and deferred["state"] == "pending" and int(headers["retry-after"]) >= 1
    assert len(sent_emails()) == 1
    # When the pipeline catches up past the first send's grace period
    clock.advance(services.settings.unknown_grace_seconds + 120)
    ingestion.poll()
    # Then the deferred message is sent once
    assert view(api, deferred["message_id"])["state"] == "accepted"
    assert len(sent_emails()) == 2


def test_an_unknown_send_not_due_yet_is_in_the_backlog(api, ingestion, clock, faults, healthy_watermarks):
    faults.append("lost")
    send(api)
    clock.advance(61)
    # Nothing is due (the unknown waits out its grace), yet the unknown backlog counts it
    report = ingestion.poll()
    assert report.resolved == {}
    assert [m.value for m in report.metrics if m.name == "UnknownBacklog"] == [1.0]
