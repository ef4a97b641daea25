"""`python -m local` as a user runs it: a subprocess spoken to over HTTP only."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from infra.constants import POLLER_TIMEOUT_SECONDS
from local.ports import free_ports
from local.sigv4 import LocalCredential
from sendledger import names
from sendledger.domain.clock import iso
from sendledger.settings import Settings
from tests.local.local_support import REPO, REQUEST_TIMEOUT_SECONDS, await_healthy, stack_environment, wait_until
from tests.local.sigv4_support import APP, APP2, TASK_1, TASK_2, signed_request

# What the stack is started with; the tests read their deadlines back from the same mapping,
# through Settings.from_env, exactly as the handlers inside the stack read it.
STACK_SETTINGS = {
    names.ENV_POLL_INTERVAL_SECONDS: "3600",  # no scheduled cycle interleaves: the tests poll explicitly
    names.ENV_UNKNOWN_GRACE_SECONDS: "1",  # so absence of a timed-out send is provable within the test
}


@dataclass(frozen=True)
class StackProcess:
    url: str
    settings: Settings  # what the handlers inside the stack read from the same environment
    log_path: Path


def _stop(process: subprocess.Popen[bytes], log_path: Path) -> None:
    """SIGTERM, then wait for the exit: the stack stops its gateway, its scheduler (a poll cycle
    in flight is bounded by the poller's timeout) and moto; SIGKILL if it did not."""
    process.send_signal(signal.SIGTERM)
    try:
        wait_until(
            process.poll,
            POLLER_TIMEOUT_SECONDS,
            lambda: f"python -m local to exit after SIGTERM:\n{log_path.read_text()}",
            done=lambda code: code is not None,
        )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@contextmanager
def running_stack(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    settings: dict[str, str],
    command: tuple[str, ...] = ("-m", "local"),
) -> Iterator[StackProcess]:
    """`python -m local` on free ports with `settings` on top of a clean environment, until the
    block ends (then SIGTERM): what every test of the stack as a subprocess starts."""
    port, moto_port = free_ports(2)
    env = stack_environment(port, moto_port, settings)
    log_path = tmp_path_factory.mktemp(name) / "stack.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, *command], cwd=REPO, env=env, stdout=log, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            await_healthy(process, url, log_path.read_text)
            banner = log_path.read_text()
            assert url in banner
            assert f"--endpoint-url http://127.0.0.1:{moto_port}" in banner
            yield StackProcess(url, Settings.from_env(env), log_path)
        finally:
            _stop(process, log_path)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackProcess]:
    with running_stack(tmp_path_factory, "local-stack", STACK_SETTINGS) as running:
        yield running


@pytest.fixture
def base_url(stack: StackProcess) -> str:
    return stack.url


def test_send_email_outbox_and_poll(base_url: str) -> None:
    key = f"local-test-{uuid.uuid4()}"
    payload = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk almost full"},
    }
    created = requests.post(
        f"{base_url}/v1/messages", json=payload, headers={"Idempotency-Key": key}, timeout=REQUEST_TIMEOUT_SECONDS
    )
    assert created.status_code == 202, created.text
    view = created.json()
    assert view["channel"] == "email"
    assert view["to"] == payload["to"]
    message_id = view["message_id"]

    outbox = requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
    sent = [entry for entry in outbox if entry["to"] == payload["to"]]
    assert len(sent) == 1
    assert sent[0]["channel"] == "email"
    assert sent[0]["provider_message_id"]
    assert set(sent[0]) >= {"channel", "to", "subject", "text", "provider_message_id", "sent_at"}

    replay = requests.post(
        f"{base_url}/v1/messages", json=payload, headers={"Idempotency-Key": key}, timeout=REQUEST_TIMEOUT_SECONDS
    )
    assert replay.status_code == 202
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.json()["message_id"] == message_id
    assert len(requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()) == len(outbox)

    poll = requests.post(f"{base_url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
    assert poll.status_code == 200, poll.text
    assert poll.json()["flush"]["ses_events_published"] == 2  # Send + Delivery


def test_a_replay_answers_the_first_answers_bytes(base_url: str) -> None:
    """Five tries: the system clock's sub-millisecond part once made 4 of 5 replays 1 ms off."""
    payload = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "replayed"},
    }
    for _ in range(5):
        key = {"Idempotency-Key": f"local-replay-{uuid.uuid4()}"}
        url = f"{base_url}/v1/messages"
        first = requests.post(url, json=payload, headers=key, timeout=REQUEST_TIMEOUT_SECONDS)
        replay = requests.post(url, json=payload, headers=key, timeout=REQUEST_TIMEOUT_SECONDS)
        assert first.status_code == replay.status_code == 202, first.text
        assert replay.headers.get("Idempotent-Replayed") == "true"
        assert replay.content == first.content


def test_an_export_reads_every_partition_at_once_without_discarding_connections(stack: StackProcess) -> None:
    """An export queries a day's 17 partitions in parallel: the ledger client's pool holds them all
    (botocore's default of 10 logged a urllib3 "Connection pool is full" warning per extra one)."""
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    window = {"since": iso(day), "until": iso(day + timedelta(days=1))}
    for _ in range(3):
        answer = requests.get(f"{stack.url}/v1/evidence", params=window, timeout=REQUEST_TIMEOUT_SECONDS)
        assert answer.status_code == 200, answer.text
    assert "Connection pool is full" not in stack.log_path.read_text()


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
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert created.status_code == 202, created.text
    message_id = created.json()["message_id"]
    assert requests.post(f"{base_url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200

    state = requests.get(f"{base_url}/v1/messages/{message_id}", timeout=REQUEST_TIMEOUT_SECONDS)
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
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/problem+json")


# --- delivery events end to end, as a new user tries it with curl ----------------------------------
ESCALATION_DEADLINE_SECONDS = 1


def send(base_url: str, channel: str, to: str, **extra: object) -> dict:
    body = {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "e2e"}}
    body.update(extra)
    response = requests.post(
        f"{base_url}/v1/messages",
        json=body,
        headers={"Idempotency-Key": str(uuid.uuid4())},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert response.status_code == 202, response.text
    return response.json()


def state_after_polls(stack: StackProcess, message_id: str, wanted: set[str], *, waits_for: float = 0) -> str:
    """Run poll cycles until the message reaches a wanted state; returns it.

    ``waits_for``: how long the contract makes the outcome wait (UNKNOWN_GRACE_SECONDS before an
    absence is proven, an escalation deadline); on top of it the cycles that act on it get one
    poller invocation's timeout.
    """

    def poll_then_state() -> str:
        poll = requests.post(f"{stack.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
        assert poll.status_code == 200, poll.text
        view = requests.get(f"{stack.url}/v1/messages/{message_id}", timeout=REQUEST_TIMEOUT_SECONDS)
        return str(view.json()["state"])

    return wait_until(
        poll_then_state,
        waits_for + POLLER_TIMEOUT_SECONDS,
        f"message {message_id} to reach {sorted(wanted)} through /local/poll",
        done=lambda state: state in wanted,
    )


def outbox_count(base_url: str, to: str) -> int:
    return sum(
        1
        for entry in requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
        if entry["to"] == to
    )


@pytest.mark.parametrize(
    ("address", "final"),
    [("bounce@simulator.amazonses.com", "bounced"), ("complaint@simulator.amazonses.com", "complained")],
)
def test_bounce_and_complaint_suppress_the_next_send(stack: StackProcess, address: str, final: str) -> None:
    first = send(stack.url, "email", address)
    assert state_after_polls(stack, first["message_id"], {final}) == final
    assert send(stack.url, "email", address)["state"] == "suppressed"


def test_invalid_sms_number_is_suppressed_at_once_but_an_outage_is_not(stack: StackProcess) -> None:
    base_url = stack.url
    invalid, unreachable = "+12065550165", "+12065550155"
    for number in (invalid, unreachable):
        message = send(base_url, "sms", number)
        assert state_after_polls(stack, message["message_id"], {"failed"}) == "failed"
    view = requests.get(f"{base_url}/v1/suppressions/%2B12065550165", timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert view["suppressed"] is True and view["version"] == 1
    assert (
        requests.get(f"{base_url}/v1/suppressions/%2B12065550155", timeout=REQUEST_TIMEOUT_SECONDS).json()["suppressed"]
        is False
    )
    assert send(base_url, "sms", invalid)["state"] == "suppressed"


@pytest.mark.parametrize("label", ["timeout-accepted", "timeout-lost"])
def test_timed_out_sends_end_accepted_with_one_outbox_entry(stack: StackProcess, label: str) -> None:
    address = f"alice-{uuid.uuid4().hex[:8]}+{label}@example.com"
    message = send(stack.url, "email", address)
    assert message["state"] == "unknown"
    # +timeout-lost is resent only once its absence is proven: UNKNOWN_GRACE_SECONDS after the send
    final = state_after_polls(
        stack, message["message_id"], {"accepted", "delivered"}, waits_for=stack.settings.unknown_grace_seconds
    )
    assert final in {"accepted", "delivered"}
    assert outbox_count(stack.url, address) == 1
    # And the stack's log says how each one was settled, one line per message; the cycle that
    # settles an unknown can come after the one whose events resolved it: the line says when.
    message_id = message["message_id"]
    resolved = (
        rf"poll: {message_id} unknown resolved at (\S+Z) by a provider event \((accepted|delivered) now\), not resent"
    )
    lost = [f"poll: {message_id} unknown: no event by the watermark plus UNKNOWN_GRACE_SECONDS", "resent: accepted"]
    patterns = {"timeout-accepted": [resolved], "timeout-lost": [re.escape(line) for line in lost]}[label]

    def poll_then_log() -> str:
        requests.post(f"{stack.url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS)
        return stack.log_path.read_text()

    log = wait_until(
        poll_then_log,
        stack.settings.unknown_grace_seconds + POLLER_TIMEOUT_SECONDS,
        f"the stack's log to say how {message_id} was settled: {patterns}",
        done=lambda log: all(re.search(pattern, log) for pattern in patterns),
    )
    if label == "timeout-accepted":
        said = re.search(resolved, log)
        history = requests.get(f"{stack.url}/v1/messages/{message_id}", timeout=REQUEST_TIMEOUT_SECONDS).json()[
            "history"
        ]
        states = [entry for entry in history if entry.get("state")]
        last_unknown = max(i for i, entry in enumerate(states) if entry["state"] == "unknown")
        assert said is not None and said.group(1) == states[last_unknown + 1]["at"], (said, history)


def test_escalation_deadline_sends_the_fallback(stack: StackProcess) -> None:
    fallback = f"oncall-{uuid.uuid4().hex[:8]}@example.com"
    message = send(
        stack.url,
        "sms",
        "+12065550195",  # 90-99: the carrier never reports a status
        category="alert",
        escalation={
            "deadline_seconds": ESCALATION_DEADLINE_SECONDS,
            "fallback": [{"channel": "email", "to": fallback}],
        },
    )
    final = state_after_polls(stack, message["message_id"], {"escalated"}, waits_for=ESCALATION_DEADLINE_SECONDS)
    assert final == "escalated"
    assert outbox_count(stack.url, fallback) == 1


def test_password_reset_mail_arrives_within_a_poll_and_the_token_works_once(base_url: str) -> None:
    email = f"bob-{uuid.uuid4().hex[:8]}@example.com"
    body = {"account_id": email, "email": email}
    reset = requests.post(f"{base_url}/v1/password-resets", json=body, timeout=REQUEST_TIMEOUT_SECONDS)
    assert reset.status_code == 202 and "token" not in reset.text
    assert requests.post(f"{base_url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
    [mail] = [
        entry
        for entry in requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
        if entry["to"] == email
    ]
    token = mail["text"].split("token=")[1].split()[0]
    consume = {"account_id": email, "token": token}
    first = requests.post(f"{base_url}/v1/password-resets/consume", json=consume, timeout=REQUEST_TIMEOUT_SECONDS)
    assert first.status_code == 200 and first.json()["reset_id"] == reset.json()["reset_id"]
    again = requests.post(f"{base_url}/v1/password-resets/consume", json=consume, timeout=REQUEST_TIMEOUT_SECONDS)
    assert again.status_code == 400 and again.headers["Content-Type"].startswith("application/problem+json")


def _signed_json(method: str, url: str, body: Any, credential: LocalCredential, **headers: str) -> requests.Response:
    data = json.dumps(body).encode() if body is not None else b""
    sent = {"Content-Type": "application/json", **headers} if body is not None else headers
    return signed_request(method, url, data, sent, credential=credential)


def test_two_sessions_of_one_role_share_an_idempotency_key_one_message_one_mail(base_url: str) -> None:
    # Two ECS tasks of one service: two sessions of app-role, each signing with its own keys
    to = f"success+{uuid.uuid4().hex[:8]}@simulator.amazonses.com"
    payload = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "x"}}
    key = f"order-{uuid.uuid4()}"
    first = _signed_json("POST", f"{base_url}/v1/messages", payload, TASK_1, **{"Idempotency-Key": key})
    retry = _signed_json("POST", f"{base_url}/v1/messages", payload, TASK_2, **{"Idempotency-Key": key})
    assert (first.status_code, retry.status_code) == (202, 202), (first.text, retry.text)
    assert retry.headers.get("Idempotent-Replayed") == "true"
    message_id = first.json()["message_id"]
    assert retry.json()["message_id"] == message_id
    assert outbox_count(base_url, to) == 1
    # Either session sees the message, by id and by key; another application does not
    for credential in (TASK_1, TASK_2):
        assert _signed_json("GET", f"{base_url}/v1/messages/{message_id}", None, credential).status_code == 200
        found = _signed_json("GET", f"{base_url}/v1/messages?idempotency_key={key}", None, credential)
        assert found.status_code == 200 and found.json()["message_id"] == message_id
    assert _signed_json("GET", f"{base_url}/v1/messages/{message_id}", None, APP).status_code == 404


def test_another_callers_reset_attack_changes_nothing_for_the_victim(base_url: str) -> None:
    account, victim_email = f"acct-{uuid.uuid4().hex[:8]}", f"victim-{uuid.uuid4().hex[:8]}@example.com"
    resets = f"{base_url}/v1/password-resets"
    # Given the victim application's reset of its account, mailed
    victim = _signed_json("POST", resets, {"account_id": account, "email": victim_email}, APP)
    assert victim.status_code == 202, victim.text
    assert requests.post(f"{base_url}/local/poll", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
    [mail] = [
        e
        for e in requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
        if e["to"] == victim_email
    ]
    token = mail["text"].split("token=")[1].split()[0]
    evidence_url = f"{resets}/{victim.json()['reset_id']}"
    # The publisher labels the mail's eligibility from the stream, off the request path: the
    # evidence compared is the one after that label, which the attack cannot have written.
    before = wait_until(
        lambda: _signed_json("GET", evidence_url, None, APP).json(),
        10,
        "the publisher's eligibility label on the victim's mail",
        done=lambda evidence: "eligibility" in [entry["type"] for entry in evidence["messages"][0]["history"]],
    )
    # When another application requests a reset of the same account id for its own address,
    # tries the victim's token, guesses until its own reset locks, and asks for the evidence
    attacker = _signed_json("POST", resets, {"account_id": account, "email": "mallory@example.com"}, APP2)
    assert attacker.status_code == 202 and set(attacker.json()) == set(victim.json())
    assert attacker.json()["reset_id"] != victim.json()["reset_id"]
    stolen = _signed_json("POST", f"{resets}/consume", {"account_id": account, "token": token}, APP2)
    wrong = [
        _signed_json("POST", f"{resets}/consume", {"account_id": account, "token": "A" * 43}, APP2) for _ in range(6)
    ]
    assert {(answer.status_code, answer.json()["type"]) for answer in [stolen, *wrong]} == {
        (400, "https://sendledger.dev/problems/invalid-token")
    }
    assert stolen.json() == wrong[0].json(), "the victim's token answers as any wrong one"
    assert _signed_json("GET", evidence_url, None, APP2).status_code == 404
    # Then the victim's reset is as it was, and its token works, once
    assert _signed_json("GET", evidence_url, None, APP).json() == before
    consumed = _signed_json("POST", f"{resets}/consume", {"account_id": account, "token": token}, APP)
    assert consumed.status_code == 200 and consumed.json()["reset_id"] == victim.json()["reset_id"]


# --- identical requests in flight ----------------------------------------------------------------
STRESS_CLIENTS = 64  # simultaneous identical requests (same key, same body) per round
STRESS_ROUNDS = 20


def test_identical_requests_at_once_are_202_or_409_and_send_once(base_url: str) -> None:
    """64 clients send the same request at the same instant, 20 times over: every answer is the
    stored 202 (or 409 with Retry-After while the first is in flight), never a 5xx or a reset
    connection, and each key sends one mail."""
    body = {
        "channel": "email",
        "to": "success+stress@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "same request"},
    }
    sent: dict[str, str] = {}  # key -> the one message id its 202s name
    with ThreadPoolExecutor(STRESS_CLIENTS) as pool:
        for _ in range(STRESS_ROUNDS):
            key, start = f"stress-{uuid.uuid4()}", threading.Barrier(STRESS_CLIENTS)

            def one(_: int, key: str = key, start: threading.Barrier = start) -> requests.Response:
                start.wait(REQUEST_TIMEOUT_SECONDS)
                headers = {"Idempotency-Key": key}
                return requests.post(
                    f"{base_url}/v1/messages", json=body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS
                )

            answers = list(pool.map(one, range(STRESS_CLIENTS)))
            assert {answer.status_code for answer in answers} <= {202, 409}, [
                a.text for a in answers if a.status_code >= 400
            ]
            for answer in answers:
                if answer.status_code == 409:
                    assert int(answer.headers["Retry-After"]) >= 1 and "in-flight" in answer.json()["type"]
            [sent[key]] = {answer.json()["message_id"] for answer in answers if answer.status_code == 202}
    outbox = requests.get(f"{base_url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).json()
    mails = Counter(entry["message_id"] for entry in outbox if entry["message_id"] in set(sent.values()))
    assert mails == Counter(set(sent.values())), "one mail per key"
