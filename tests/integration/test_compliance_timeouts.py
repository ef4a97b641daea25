"""The compliance reviewer's scenario: provider faults at send time, then client retries.

The simulator (local/simulator/) injects the faults at the transport edge, so the real SES
adapter, use case and handler run unchanged.
"""

import boto3

from tests.conftest import TABLE


def alert(to):
    return {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def post(api, body, key):
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})


def history(api, message_id):
    return api("GET", f"/v1/messages/{message_id}")[2]["history"]


def test_timeout_after_acceptance_then_retry_sends_once(api, simulator, healthy_watermarks):
    # Given SES accepts the message but the call times out
    status, headers, first = post(api, alert("alice+timeout-accepted@example.com"), "intent-1")
    # Then the message is unknown (evidence, not permission), and the caller is told to wait
    assert status == 202 and first["state"] == "unknown" and int(headers["retry-after"]) > 0
    # When the client retries the same intent
    status, headers, again = post(api, alert("alice+timeout-accepted@example.com"), "intent-1")
    # Then it gets the stored answer and nothing is sent again
    assert again["message_id"] == first["message_id"] and headers["idempotent-replayed"] == "true"
    assert len(simulator.outbox()) == 1
    entries = history(api, first["message_id"])
    assert entries[-1]["type"] == "provider_outcome" and entries[-1]["state"] == "unknown"
    assert entries[-1]["provider_error"] == "ReadTimeoutError"


def test_timeout_without_acceptance_is_not_blindly_resent(api, simulator, healthy_watermarks):
    _, _, first = post(api, alert("carol+timeout-lost@example.com"), "intent-2")
    post(api, alert("carol+timeout-lost@example.com"), "intent-2")
    assert first["state"] == "unknown"
    assert simulator.outbox() == []  # absence must be proven by the poller before any retry


def test_throttled_send_backs_off_then_is_accepted_once(api, services, simulator, healthy_watermarks):
    status, _, view = post(api, alert("dave+throttle@example.com"), "intent-3")
    assert status == 202 and view["state"] == "accepted"
    assert len(services.sleep.slept) == 2 and len(simulator.outbox()) == 1
    assert history(api, view["message_id"])[-1]["attempts"] == 3


def test_reset_with_timeout_after_acceptance_keeps_one_token(api, simulator, ingestion, healthy_watermarks):
    body = {"account_id": "acct-9", "email": "erin+timeout-accepted@example.com"}
    _, _, first = api("POST", "/v1/password-resets", body)
    ingestion.poll()  # the poller mints the token and sends: SES accepts, the call times out
    _, _, second = api("POST", "/v1/password-resets", body)
    ingestion.poll()
    assert second["reset_id"] == first["reset_id"]
    assert len(simulator.outbox()) == 1  # the unknown send is not proven lost: no second token
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    resets = [item for item in items if item["pk"]["S"].startswith("RESET#")]
    assert len(resets) == 1 and resets[0]["state"]["S"] == "active"
    message = [
        item for item in items if item["pk"]["S"] == f"MSG#{resets[0]['message_id']['S']}" and item["sk"]["S"] == "MSG"
    ]
    assert message[0]["state"]["S"] == "unknown"
    token = simulator.outbox()[0]["text"].split("token=")[1].split()[0]
    assert token not in str(items)
