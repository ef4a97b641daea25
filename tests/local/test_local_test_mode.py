"""Test mode in `python -m local`: the same code as deployed, so the same behaviour.

A caller an admin marked `test` (`PUT /v1/admin/callers/{caller_id}`) sends nothing to the
simulated providers either: nothing lands in /local/outbox, the simulated events reach the poller
through the SES events queue, and the real recipient stays sendable.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
import requests

from local.constants import DEFAULT_LOCAL_CREDENTIALS
from local.sigv4 import parse_credentials
from sendledger.domain.callers import caller_of
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS, wait_until
from tests.local.sigv4_support import signed_request
from tests.local.test_local_stack_http import STACK_SETTINGS, StackProcess, running_stack, send

TESTER_ARN = "arn:aws:iam::123456789012:user/tester"
TESTER_CREDENTIAL = "tester:AKIALOCALTESTER00001:local-tester-secret"
(TESTER,) = parse_credentials(TESTER_CREDENTIAL)
BOUNCE = "bounce@simulator.amazonses.com"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackProcess]:
    settings = {**STACK_SETTINGS, "SENDLEDGER_LOCAL_CREDENTIALS": f"{DEFAULT_LOCAL_CREDENTIALS},{TESTER_CREDENTIAL}"}
    with running_stack(tmp_path_factory, "local-test-mode", settings) as running:
        # An admin marks the tester test (unsigned: the local principal is one of the local admins)
        url = f"{running.url}/v1/admin/callers/{caller_of(TESTER_ARN, {}).id}"
        answer = requests.put(url, json={"test_mode": True}, timeout=REQUEST_TIMEOUT_SECONDS)
        assert answer.status_code == 200 and answer.json()["test_mode"] is True, answer.text
        yield running


def send_as_tester(stack: StackProcess, to: str) -> dict:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "t"}}
    response = signed_request(
        "POST",
        f"{stack.url}/v1/messages",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())},
        credential=TESTER,
    )
    assert response.status_code == 202, response.text
    return response.json()


def view_as_tester(stack: StackProcess, message_id: str) -> dict:
    response = signed_request("GET", f"{stack.url}/v1/messages/{message_id}", credential=TESTER)
    assert response.status_code == 200, response.text
    return response.json()


def polled_until(stack: StackProcess, message_id: str, state: str) -> dict:
    def poll_then_view() -> dict:
        assert requests.post(f"{stack.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
        return view_as_tester(stack, message_id)

    return wait_until(poll_then_view, 30, f"{message_id} to be {state}", done=lambda view: view["state"] == state)


def outbox(stack: StackProcess) -> list[dict]:
    return requests.get(f"{stack.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()


def suppressed(stack: StackProcess, address: str) -> bool:
    url = f"{stack.url}/v1/suppressions/{address.replace('@', '%40')}"
    return bool(requests.get(url, timeout=REQUEST_TIMEOUT_SECONDS).json()["suppressed"])


def test_a_test_callers_bounce_is_simulated_and_leaves_the_real_recipient_sendable(stack: StackProcess) -> None:
    sent = send_as_tester(stack, BOUNCE)
    assert sent["test"] is True and sent["state"] == "accepted"
    view = polled_until(stack, sent["message_id"], "bounced")
    assert view["test"] is True and all(entry["test"] is True for entry in view["history"])
    assert [entry for entry in outbox(stack) if entry["to"] == BOUNCE] == []  # no provider saw it
    assert not suppressed(stack, BOUNCE)
    # A real caller's send to it goes to the (simulated) provider and bounces for real
    real = send(stack.url, "email", BOUNCE)
    assert "test" not in real and [entry["message_id"] for entry in outbox(stack)] == [real["message_id"]]
    requests.post(f"{stack.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
    wait_until(lambda: suppressed(stack, BOUNCE), 30, "the real bounce to suppress the real recipient")
