"""POST /v1/messages through the real handler against moto: idempotency and the request budget."""

from datetime import datetime, timedelta

from tests.conftest import TABLE
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import ADMIN, FakeClock
from tests.support.fixtures import put_watermark
from tests.support.outbox import sent_emails, sent_sms
from tests.support.status_out import status_out_harness

ALERT = {
    "channel": "email",
    "to": "alice@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "disk full"},
}


def send(api, body=ALERT, key="key-1", **kwargs):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return api("POST", "/v1/messages", body, headers=headers, **kwargs)


def test_happy_path_send_costs_two_requests_and_replay_one(
    api, services, warm_watermarks, warm_caller_settings, warm_templates
):
    # Given a healthy pipeline and a fresh recipient
    with count_dynamodb_requests() as counter:
        # When the app sends
        status, headers, body = send(api)
        first = counter.total
        counter.reset()
        # And retries with the same key
        status2, headers2, body2 = send(api)
    # Then: accepted once, two requests; the replay is the stored answer for one request
    assert status == 202 and body["state"] == "accepted" and body["provider_message_id"]
    assert first == 2, counter.operations
    assert counter.total == 1
    assert status2 == 202 and body2 == body
    assert headers2["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in headers
    assert len(sent_emails()) == 1


def test_missing_key_is_400_problem(api):
    status, headers, body = send(api, key=None)
    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    assert body["type"].endswith("idempotency-key-missing") and body["status"] == 400
    # named like every other field error
    assert [error["field"] for error in body["errors"]] == ["Idempotency-Key"]
    assert set(body["errors"][0]) == {"field", "message"}


def test_same_key_other_payload_is_422(api, healthy_watermarks):
    send(api)
    status, _, body = send(api, {**ALERT, "params": {"summary": "other"}})
    assert status == 422 and body["type"].endswith("idempotency-key-reused")
    assert len(sent_emails()) == 1


def test_quoted_structured_field_key_is_the_same_key(api, healthy_watermarks):
    send(api, key="abc")
    status, headers, _ = send(api, key='"abc"')
    assert status == 202 and headers["idempotent-replayed"] == "true"


def test_event_id_derives_the_key(api, healthy_watermarks):
    body = {**ALERT, "event_id": "order-42-shipped"}
    first = send(api, body, key=None)
    second = send(api, body, key=None)
    assert first[0] == second[0] == 202
    assert first[2]["message_id"] == second[2]["message_id"]
    assert second[1]["idempotent-replayed"] == "true"


def test_keys_are_scoped_per_caller(api, healthy_watermarks):
    mine = send(api)
    theirs = send(api, principal="arn:aws:iam::123456789012:user/someone-else")
    assert mine[2]["message_id"] != theirs[2]["message_id"]
    assert len(sent_emails()) == 2


def test_key_expires_after_retention(api, services, clock, healthy_watermarks):
    first = send(api)
    clock.advance(timedelta(days=31).total_seconds())
    for source in ("ses", "sms"):  # the pipeline stayed healthy meanwhile
        put_watermark(TABLE, source, clock.now())
    second = send(api)
    assert second[0] == 202 and second[2]["message_id"] != first[2]["message_id"]
    assert "idempotent-replayed" not in second[1]


def test_in_flight_key_is_409_with_retry_after(api, services, healthy_watermarks):
    # Given a provider that is slow: while it is sending, the same request arrives again
    answers = []
    real = services.email.send_email

    def slow_send(message_id, to, content, **kwargs):
        answers.append(send(api))
        return real(message_id, to, content, **kwargs)

    services.email.send_email = slow_send
    status, _, _ = send(api)
    assert status == 202
    inner_status, inner_headers, inner_body = answers[0]
    assert inner_status == 409 and int(inner_headers["retry-after"]) >= 1
    assert inner_body["type"].endswith("idempotency-key-in-flight")
    assert len(sent_emails()) == 1


def test_sms_send_is_accepted(api, healthy_watermarks):
    body = {
        "channel": "sms",
        "to": "+12065550123",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "db down"},
    }
    status, _, view = send(api, body)
    assert status == 202 and view["state"] == "accepted" and view["to"] == "+12065550123"
    assert sent_sms() == [("+12065550123", "ALERT: db down")]


def test_message_view_has_append_only_history(api, healthy_watermarks):
    _, _, view = send(api)
    status, _, full = api("GET", f"/v1/messages/{view['message_id']}")
    assert status == 200
    types = [entry["type"] for entry in full["history"]]
    assert types == ["intent", "provider_outcome"]  # the eligibility label follows from the stream
    assert full["history"][0]["suppression_version"] == 0 and full["history"][0]["stale_policy"] == "allow"
    assert full["history"][-1]["provider_message_id"] == view["provider_message_id"]
    assert "alice@example.com" not in str(full["history"])


def test_unknown_message_is_404(api):
    status, headers, body = api("GET", "/v1/messages/msg_01NOPE")
    assert status == 404 and headers["content-type"] == "application/problem+json"


def test_suppressed_recipient_is_not_sent(api, services, warm_watermarks, warm_caller_settings, warm_templates):
    # Given an admin suppressed the address
    status, _, view = api(
        "PUT", "/v1/admin/suppressions/alice%40example.com", {"reason": "user asked"}, principal=ADMIN
    )
    assert status == 200 and view["suppressed"] is True and view["version"] == 1
    # When the app sends to it
    with count_dynamodb_requests() as counter:
        status, _, message = send(api, key="after-suppression")
    # Then nothing is sent and the decision is on record
    assert status == 202 and message["state"] == "suppressed"
    assert counter.total == 2
    assert sent_emails() == []
    _, _, full = api("GET", f"/v1/messages/{message['message_id']}")
    assert full["history"][0]["eligibility"] == "suppressed"
    assert full["history"][0]["suppression_version"] == 1


def test_unsuppress_needs_a_reason_and_is_audited(api, healthy_watermarks):
    api("PUT", "/v1/admin/suppressions/alice%40example.com", {"reason": "bounced"}, principal=ADMIN)
    status, _, body = api("DELETE", "/v1/admin/suppressions/alice%40example.com", principal=ADMIN)
    assert status == 400 and body["status"] == 400
    status, _, view = api(
        "DELETE",
        "/v1/admin/suppressions/alice%40example.com",
        query={"reason": "confirmed new mailbox"},
        principal=ADMIN,
    )
    assert status == 200 and view["suppressed"] is False and view["version"] == 2
    assert [h["type"] for h in view["history"]] == ["suppressed", "unsuppressed"]
    assert view["history"][1]["actor"] == ADMIN and view["history"][1]["reason"] == "confirmed new mailbox"
    status, _, message = send(api, key="after-reenable")
    assert message["state"] == "accepted"
    _, _, full = api("GET", f"/v1/messages/{message['message_id']}")
    assert full["history"][0]["suppression_version"] == 2


def test_never_seen_recipient_view(api):
    status, _, view = api("GET", "/v1/suppressions/%2B12065550123")
    assert status == 200
    assert view == {
        "recipient": "+12065550123",
        "suppressed": False,
        "reason_class": None,
        "since": None,
        "version": 0,
        "history": [],
    }


def test_recent_send_is_labelled_stale_and_allowed_by_default(api, services, clock, healthy_watermarks):
    pump = status_out_harness(services.settings)[0]
    send(api, key="first")
    clock.advance(30)
    status, _, view = send(api, {**ALERT, "params": {"summary": "again"}}, key="second")
    assert view["state"] == "accepted"
    pump.pump()  # the publisher labels it from the recipient's stream record
    _, _, full = api("GET", f"/v1/messages/{view['message_id']}")
    [label] = [entry for entry in full["history"] if entry["type"] == "eligibility"]
    assert label["eligibility"] == "eligible_stale" and label["previous_send_age_seconds"] == 30.0


def test_a_caller_cannot_read_another_callers_message(api, healthy_watermarks):
    _, _, view = send(api)
    status, headers, _ = api(
        "GET", f"/v1/messages/{view['message_id']}", principal="arn:aws:iam::123456789012:user/other"
    )
    assert status == 404 and headers["content-type"] == "application/problem+json"
    assert api("GET", f"/v1/messages/{view['message_id']}")[0] == 200


class TickingClock(FakeClock):
    """Every reading 0.7 ms after the last, from a time with a sub-millisecond part: the answer's
    updated_at falls between the milliseconds its stored form counts in."""

    def now(self) -> datetime:
        self.current += timedelta(microseconds=700)
        return self.current


def test_a_replay_is_the_first_answer_byte_for_byte(api, services, healthy_watermarks, monkeypatch):
    # Given a clock whose readings have sub-millisecond parts, as the system clock's do
    ticking = TickingClock(current=services.clock.now().replace(microsecond=900))
    monkeypatch.setattr(services, "clock", ticking)
    for attempt in range(5):
        key = {"Idempotency-Key": f"replay-{attempt}"}
        # When a send is answered, then retried with its key
        first = api.raw("POST", "/v1/messages", ALERT, headers=key)
        replay = api.raw("POST", "/v1/messages", ALERT, headers=key)
        # Then the replay's body is the first answer's, to the byte (SPEC §4: the stored body)
        assert first[0] == replay[0] == 202 and replay[1]["idempotent-replayed"] == "true"
        assert replay[2] == first[2], attempt
