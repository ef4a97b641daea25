"""`python -m local` as a user runs it: a subprocess spoken to over HTTP only (SPEC §4, §8)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
HANDLERS = REPO / "functions" / "sendledger" / "handlers"
STARTUP_TIMEOUT_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port, moto_port = free_port(), free_port()
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "SENDLEDGER_", "POWERTOOLS_"))
    }
    env.pop("PYTHONPATH", None)  # python -m local must find functions/ by itself
    env.update(
        {
            "SENDLEDGER_PORT": str(port),
            "SENDLEDGER_MOTO_PORT": str(moto_port),
            "POLL_INTERVAL_SECONDS": "3600",  # the test polls explicitly
            "UNKNOWN_GRACE_SECONDS": "1",  # so absence of a timed-out send is provable within the test
            "PYTHONUNBUFFERED": "1",
        }
    )
    log_path = tmp_path_factory.mktemp("local-stack") / "stack.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "local"], cwd=REPO, env=env, stdout=log, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
            while True:
                if process.poll() is not None:
                    pytest.fail(f"python -m local exited early:\n{log_path.read_text()}")
                try:
                    if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except requests.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"/healthz not ready in 60 s:\n{log_path.read_text()}")
                time.sleep(0.2)
            banner = log_path.read_text()
            assert url in banner
            assert f"--endpoint-url http://127.0.0.1:{moto_port}" in banner
            yield url
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def test_send_email_outbox_and_poll(base_url: str) -> None:
    key = f"local-test-{uuid.uuid4()}"
    payload = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk almost full"},
    }
    created = requests.post(f"{base_url}/v1/messages", json=payload, headers={"Idempotency-Key": key}, timeout=30)
    assert created.status_code == 202, created.text
    view = created.json()
    assert view["channel"] == "email"
    assert view["to"] == payload["to"]
    message_id = view["message_id"]

    outbox = requests.get(f"{base_url}/local/outbox", timeout=10).json()
    sent = [entry for entry in outbox if entry["to"] == payload["to"]]
    assert len(sent) == 1
    assert sent[0]["channel"] == "email"
    assert sent[0]["provider_message_id"]
    assert set(sent[0]) >= {"channel", "to", "subject", "text", "provider_message_id", "sent_at"}

    replay = requests.post(f"{base_url}/v1/messages", json=payload, headers={"Idempotency-Key": key}, timeout=30)
    assert replay.status_code == 202
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.json()["message_id"] == message_id
    assert len(requests.get(f"{base_url}/local/outbox", timeout=10).json()) == len(outbox)

    poll = requests.post(f"{base_url}/local/poll", timeout=60)
    assert poll.status_code == 200, poll.text
    assert poll.json()["flush"]["ses_events_published"] == 2  # Send + Delivery


def test_poll_applies_delivery_events(base_url: str) -> None:
    created = requests.post(
        f"{base_url}/v1/messages",
        json={
            "channel": "email",
            "to": "success+poll@simulator.amazonses.com",
            "template": {"id": "alert", "version": "1"},
            "params": {"summary": "poll me"},
        },
        headers={"Idempotency-Key": f"local-test-{uuid.uuid4()}"},
        timeout=30,
    )
    assert created.status_code == 202, created.text
    message_id = created.json()["message_id"]
    assert requests.post(f"{base_url}/local/poll", timeout=60).status_code == 200

    state = requests.get(f"{base_url}/v1/messages/{message_id}", timeout=30)
    assert state.status_code == 200
    assert state.json()["state"] == "delivered"


def test_missing_idempotency_key_is_a_problem(base_url: str) -> None:
    response = requests.post(
        f"{base_url}/v1/messages",
        json={
            "channel": "sms",
            "to": "+12065550100",
            "template": {"id": "alert", "version": "1"},
            "params": {"summary": "x"},
        },
        timeout=30,
    )
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/problem+json")


# --- SPEC §6 end to end, as a new user tries it with curl ----------------------------------
POLL_DEADLINE_SECONDS = 20.0


def send(base_url: str, channel: str, to: str, **extra: object) -> dict:
    body = {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "e2e"}}
    body.update(extra)
    response = requests.post(
        f"{base_url}/v1/messages", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=30
    )
    assert response.status_code == 202, response.text
    return response.json()


def state_after_polls(base_url: str, message_id: str, wanted: set[str]) -> str:
    """Run poll cycles until the message reaches a wanted state (bounded; the stack's own time)."""
    deadline = time.monotonic() + POLL_DEADLINE_SECONDS
    while True:
        assert requests.post(f"{base_url}/local/poll", timeout=60).status_code == 200
        state = requests.get(f"{base_url}/v1/messages/{message_id}", timeout=30).json()["state"]
        if state in wanted or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def outbox_count(base_url: str, to: str) -> int:
    return sum(1 for entry in requests.get(f"{base_url}/local/outbox", timeout=30).json() if entry["to"] == to)


@pytest.mark.parametrize(
    ("address", "final"),
    [("bounce@simulator.amazonses.com", "bounced"), ("complaint@simulator.amazonses.com", "complained")],
)
def test_bounce_and_complaint_suppress_the_next_send(base_url: str, address: str, final: str) -> None:
    first = send(base_url, "email", address)
    assert state_after_polls(base_url, first["message_id"], {final}) == final
    assert send(base_url, "email", address)["state"] == "suppressed"


def test_invalid_sms_number_is_suppressed_at_once_but_an_outage_is_not(base_url: str) -> None:
    invalid, unreachable = "+12065550165", "+12065550155"
    for number in (invalid, unreachable):
        message = send(base_url, "sms", number)
        assert state_after_polls(base_url, message["message_id"], {"failed"}) == "failed"
    view = requests.get(f"{base_url}/v1/suppressions/%2B12065550165", timeout=30).json()
    assert view["suppressed"] is True and view["version"] == 1
    assert requests.get(f"{base_url}/v1/suppressions/%2B12065550155", timeout=30).json()["suppressed"] is False
    assert send(base_url, "sms", invalid)["state"] == "suppressed"


@pytest.mark.parametrize("label", ["timeout-accepted", "timeout-lost"])
def test_timed_out_sends_end_accepted_with_one_outbox_entry(base_url: str, label: str) -> None:
    address = f"alice-{uuid.uuid4().hex[:8]}+{label}@example.com"
    message = send(base_url, "email", address)
    assert message["state"] == "unknown"
    assert state_after_polls(base_url, message["message_id"], {"accepted", "delivered"}) in {"accepted", "delivered"}
    assert outbox_count(base_url, address) == 1


def test_escalation_deadline_sends_the_fallback(base_url: str) -> None:
    fallback = f"oncall-{uuid.uuid4().hex[:8]}@example.com"
    message = send(
        base_url,
        "sms",
        "+12065550195",  # 90-99: the carrier never reports a status
        category="alert",
        escalation={"deadline_seconds": 1, "fallback": [{"channel": "email", "to": fallback}]},
    )
    assert state_after_polls(base_url, message["message_id"], {"escalated"}) == "escalated"
    assert outbox_count(base_url, fallback) == 1


def test_password_reset_mail_arrives_within_a_poll_and_the_token_works_once(base_url: str) -> None:
    email = f"bob-{uuid.uuid4().hex[:8]}@example.com"
    body = {"account_id": email, "email": email}
    reset = requests.post(f"{base_url}/v1/password-resets", json=body, timeout=30)
    assert reset.status_code == 202 and "token" not in reset.text
    assert requests.post(f"{base_url}/local/poll", timeout=60).status_code == 200
    [mail] = [entry for entry in requests.get(f"{base_url}/local/outbox", timeout=30).json() if entry["to"] == email]
    token = mail["text"].split("token=")[1].split()[0]
    consume = {"account_id": email, "token": token}
    first = requests.post(f"{base_url}/v1/password-resets/consume", json=consume, timeout=30)
    assert first.status_code == 200 and first.json()["reset_id"] == reset.json()["reset_id"]
    again = requests.post(f"{base_url}/v1/password-resets/consume", json=consume, timeout=30)
    assert again.status_code == 400 and again.headers["Content-Type"].startswith("application/problem+json")
