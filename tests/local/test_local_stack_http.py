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
API_MODULE = HANDLERS / "api.py"
STARTUP_TIMEOUT_SECONDS = 60.0

pytestmark = pytest.mark.skipif(not API_MODULE.exists(), reason="sendledger/handlers/api.py is not written yet")


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


@pytest.mark.skipif(not (HANDLERS / "poller.py").exists(), reason="sendledger/handlers/poller.py not written yet")
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
