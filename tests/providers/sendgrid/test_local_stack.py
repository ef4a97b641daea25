"""`EMAIL_PROVIDER=sendgrid python -m local`, spoken to over HTTP only, as a new user would with curl."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from sendledger import names
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.test_local_stack_http import running_stack
from tests.providers.formats import provider_format

VECTOR = provider_format("sendgrid-webhook-signature-vector.json")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {
        names.ENV_EMAIL_PROVIDER: "sendgrid",
        names.ENV_POLL_INTERVAL_SECONDS: "3600",  # the test polls explicitly
        names.ENV_UNKNOWN_GRACE_SECONDS: "1",
    }
    with running_stack(tmp_path_factory, "sendgrid-stack", settings) as running:
        assert "Email:         sendgrid (default)" in running.log_path.read_text()
        assert "sendgrid simulator: http://127.0.0.1:" in running.log_path.read_text()
        yield running.url
        logged = running.log_path.read_text()
        assert "SG.local-simulator" not in logged and "MFkw" not in logged, "keys never reach the log"


def call(method: str, url: str, **kwargs: Any) -> requests.Response:
    return requests.request(method, url, timeout=REQUEST_TIMEOUT_SECONDS, **kwargs)


def send(base_url: str, to: str) -> dict[str, Any]:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    answer = call("POST", f"{base_url}/v1/messages", json=body, headers={"Idempotency-Key": f"k-{to}"})
    assert answer.status_code == 202, answer.text
    view: dict[str, Any] = answer.json()
    return view


def state(base_url: str, message_id: str) -> str:
    return str(call("GET", f"{base_url}/v1/messages/{message_id}").json()["state"])


def test_behaves_like_the_default_over_sendgrids_own_api_and_webhook(base_url: str) -> None:
    bounce = send(base_url, "bounce@simulator.amazonses.com")
    complaint = send(base_url, "complaint@simulator.amazonses.com")
    lost = send(base_url, "bob+timeout-lost@example.com")
    assert bounce["provider"] == "sendgrid" and lost["state"] == "unknown"
    time.sleep(3.1)  # the simulator's events are due seconds after the send; the grace (1 s) passes
    call("POST", f"{base_url}/local/poll")  # signed batch → webhook → queue → applied; absence proven
    assert state(base_url, bounce["message_id"]) == "bounced"
    assert state(base_url, complaint["message_id"]) == "complained"
    assert call("GET", f"{base_url}/v1/suppressions/bounce%40simulator.amazonses.com").json()["suppressed"]
    assert state(base_url, lost["message_id"]) in ("accepted", "delivered")
    outbox = call("GET", f"{base_url}/local/outbox").json()
    assert {entry["provider"] for entry in outbox} == {"sendgrid"}
    assert [entry["to"] for entry in outbox].count("bob+timeout-lost@example.com") == 1


def test_a_wrong_signature_is_403_problem_json(base_url: str) -> None:
    headers = {
        "Content-Type": "application/json",
        # A valid signature, but by the fixtures' key, not the simulator's.
        "X-Twilio-Email-Event-Webhook-Signature": VECTOR["signature"],
        "X-Twilio-Email-Event-Webhook-Timestamp": str(int(time.time())),
    }
    body = '[{"event":"bounce","email":"x@example.com","sg_event_id":"abc","timestamp":1}]'
    answer = call("POST", f"{base_url}{names.webhook_path('sendgrid')}", data=body, headers=headers)
    assert answer.status_code == 403 and answer.headers["Content-Type"] == "application/problem+json"
    assert not call("GET", f"{base_url}/v1/suppressions/x%40example.com").json()["suppressed"]
