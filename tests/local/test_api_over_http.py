"""The API and the `sendledger` command over HTTP: the local gateway in front of the real api Lambda (moto).

What a newcomer meets first: no server, no credentials, no region, a local stack in SigV4 mode,
keys and reasons with spaces, `+`, `%`, `&`, `#` and non-ASCII characters in the query, HEAD.
Every failure of the command is one line on stderr (or one JSON object with --json) and its
documented exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from sendledger_client import cli

from local.auth import LocalAuth
from local.constants import ENV_LOCAL_AUTH, LOCAL_PRINCIPAL
from local.gateway import Gateway
from local.ports import free_ports
from sendledger import names
from sendledger.handlers import api as api_handler
from tests.conftest import moto_ledger
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import APP

COMMAND = Path(sys.executable).parent / "sendledger"
# Printable ASCII only (an Idempotency-Key is a header); every character a query must encode.
AWKWARD_KEY = "my key 1 + 50% & more #2 a+b=c?"
AWKWARD_TEXT = "confirmé par téléphone + 50% & co #1 ✓"
OUTBOX = [
    {
        "message_id": "msg_01OUTBOX",
        "channel": "email",
        "provider": "ses",
        "to": "bob@example.com",
        "subject": "Reset your password",
        "text": "Reset it here:\nhttps://app.example.com/reset?token=abc\n",
        "html": "<html><body><p>Reset it <a href='https://app.example.com/reset?token=abc'>here</a></p></body></html>",
        "sent_at": "2026-12-03T12:00:00.000Z",
    }
]
EVENTS = [
    {
        "id": "evt-1",
        "source": "sendledger",
        "detail-type": "sendledger.message.state-changed",
        "time": "2026-12-03T12:00:01Z",
        "detail": {"message_id": "msg_01OUTBOX", "state": "delivered", "previous_state": "accepted"},
    },
    {
        "id": "evt-2",
        "source": "sendledger",
        "detail-type": "sendledger.suppression.changed",
        "time": "2026-12-03T12:00:02Z",
        "detail": {"recipient": "bob@example.com", "suppressed": True, "version": 2, "reason": "bounced"},
    },
]


def start(auth: dict[str, str] | None = None) -> Gateway:
    gateway = Gateway(
        api_handler.lambda_handler,
        principal=LOCAL_PRINCIPAL,
        routes=names.API_ROUTES,
        port=0,
        auth=LocalAuth.from_env(auth or {}),
        outbox=lambda: OUTBOX,
        events=lambda: EVENTS,
    )
    gateway.start()
    # The first invocation prints the ColdStart metric (to this process's stdout): not the command's.
    requests.get(f"{gateway.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS)
    return gateway


@pytest.fixture
def aws() -> Iterator[None]:
    """The suite's moto ledger (tests/local's own `aws` fixture has none)."""
    with moto_ledger():
        yield


@pytest.fixture(autouse=True)
def quiet_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The api Lambda runs in this process: its EMF lines would land in the command's captured stdout."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


@pytest.fixture
def gateway(api: Any, healthy_watermarks: None) -> Iterator[Gateway]:
    running = start()
    yield running
    running.stop()


@pytest.fixture
def strict(api: Any, healthy_watermarks: None) -> Iterator[Gateway]:
    running = start({ENV_LOCAL_AUTH: "sigv4"})
    yield running
    running.stop()


def no_aws_config(**extra: str) -> dict[str, str]:
    """The environment of a fresh machine: no AWS credentials, profile or region anywhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SENDLEDGER_"))}
    env.update(
        AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_EC2_METADATA_DISABLED="true", **extra
    )
    return env


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command, as a user runs it."""
    return subprocess.run(
        [str(COMMAND), *args],
        capture_output=True,
        text=True,
        env=env or no_aws_config(),
        timeout=REQUEST_TIMEOUT_SECONDS,
        check=False,
    )


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command's entry point in this process (cheaper than a process for each call)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- failures ---------------------------------------------------------------------------------
def test_without_a_server_it_says_to_start_one_and_exits_2() -> None:
    endpoint = f"http://127.0.0.1:{free_ports(1)[0]}"  # nothing listens there
    result = run("--endpoint", endpoint, "show", "msg_1")
    line = one_line(result.stderr)
    assert result.returncode == cli.EXIT_NO_ANSWER and result.stdout == ""
    assert "no answer" in line and "make run" in line and "Connection refused" in line
    as_json = run("--json", "--endpoint", endpoint, "show", "msg_1")
    document = json.loads(one_line(as_json.stderr))
    assert as_json.returncode == document["exit_code"] == cli.EXIT_NO_ANSWER
    assert "make run" in document["detail"]


def test_a_remote_endpoint_without_region_or_credentials_still_has_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = ("--endpoint", "https://api.example.com/prod")
    helped = run(*remote, "show", "--help")
    assert helped.returncode == 0 and "MESSAGE_ID" in helped.stdout and helped.stderr == ""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in no_aws_config().items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    code, _, err = call(capsys, *remote, "show", "msg_1")
    assert code == cli.EXIT_NOT_CONFIGURED and "--region" in one_line(err)
    code, _, err = call(capsys, *remote, "--region", "eu-west-1", "--json", "show", "msg_1")
    document = json.loads(one_line(err))
    assert code == document["exit_code"] == cli.EXIT_NOT_CONFIGURED
    assert "AWS_ACCESS_KEY_ID" in document["detail"]


def test_api_problems_exit_1_in_one_line_or_as_the_problem_document(
    gateway: Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, "--endpoint", gateway.url, "show", "msg_00000000000000000000000000")
    assert code == cli.EXIT_REFUSED and out == ""
    assert one_line(err).startswith("sendledger: 404 Not Found: no message")
    code, _, err = call(capsys, "--json", "--endpoint", gateway.url, "suppression", "show", "not an address")
    problem = json.loads(one_line(err))
    assert code == problem["exit_code"] == cli.EXIT_REFUSED
    assert problem["status"] == 400 and problem["type"].startswith("https://sendledger.dev/problems/")


def test_usage_errors_have_their_own_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "show")
    assert code == cli.EXIT_USAGE and "MESSAGE_ID" in one_line(err) and "--help" in err
    code, _, err = call(capsys, "find", "--event-id", "e")
    assert code == cli.EXIT_USAGE and "--template-version" in one_line(err)


# --- SigV4 against the local stack ------------------------------------------------------------
def test_sign_uses_the_credential_chain_against_a_sigv4_local_stack(
    strict: Gateway, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unsigned: refused, and the one line says how to sign.
    code, _, err = call(capsys, "--endpoint", strict.url, "show", "msg_1")
    assert code == cli.EXIT_REFUSED and "403" in err and "--sign" in one_line(err)
    # Health stays open, as the banner's curl needs it.
    assert requests.get(f"{strict.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
    # Signed with the local app credential from the environment (botocore's chain).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", APP.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", APP.secret_key)
    send = ("send", "--channel", "email", "--to", "success@simulator.amazonses.com", "--template", "alert")
    code, out, err = call(capsys, "--json", "--sign", "--endpoint", strict.url, *send, "--param", "summary=x")
    assert code == 0, err
    message_id = json.loads(out)["message_id"]
    monkeypatch.setenv("SENDLEDGER_SIGN", "1")
    code, out, err = call(capsys, "--json", "--endpoint", strict.url, "show", message_id)
    assert code == 0 and json.loads(out)["message_id"] == message_id, err


# --- query encoding, both sides ---------------------------------------------------------------
def test_keys_and_reasons_with_awkward_characters_round_trip(
    gateway: Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("--json", "--endpoint", gateway.url)
    send = ("send", "--channel", "email", "--to", "success@simulator.amazonses.com", "--template", "alert")
    code, out, err = call(capsys, *base, *send, "--param", "summary=x", "--idempotency-key", AWKWARD_KEY)
    assert code == 0, err
    sent = json.loads(out)
    code, out, err = call(capsys, *base, "find", "--idempotency-key", AWKWARD_KEY)
    assert code == 0, err
    assert json.loads(out)["message_id"] == sent["message_id"]
    # The append-only history keeps the reason exactly as typed (the admin's view shows it).
    recipient = "carol+tag@example.com"
    for action in ("add", "lift"):
        code, _, err = call(capsys, *base, "suppression", action, recipient, "--reason", AWKWARD_TEXT)
        assert code == 0, err
    code, out, _ = call(capsys, *base, "suppression", "show", "--admin", recipient)
    assert [entry["reason"] for entry in json.loads(out)["history"]] == [AWKWARD_TEXT, AWKWARD_TEXT]


def test_the_api_decodes_a_query_as_form_encoding_does(gateway: Gateway) -> None:
    """`+` is a space and `%2B` a plus, whoever encoded the query (curl, a browser, an SDK)."""
    body = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "x"},
    }
    sends = [({"Idempotency-Key": "my key 1"}, body), ({"Idempotency-Key": "a+b"}, body)]
    sends.append(({}, {**body, "event_id": AWKWARD_TEXT}))  # no header: the key derives from event_id
    for headers, sent in sends:
        url = f"{gateway.url}/v1/messages"
        answer = requests.post(url, json=sent, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)
        assert answer.status_code == 202, answer.text
    found = {
        query: requests.get(f"{gateway.url}/v1/messages?{query}", timeout=REQUEST_TIMEOUT_SECONDS)
        for query in ("idempotency_key=my+key+1", "idempotency_key=my%20key%201", "idempotency_key=a%2Bb")
    }
    assert {query: answer.status_code for query, answer in found.items()} == dict.fromkeys(found, 200)
    assert found["idempotency_key=my+key+1"].json() == found["idempotency_key=my%20key%201"].json()
    # A non-ASCII value: UTF-8, percent-encoded.
    by_event = f"event_id={quote(AWKWARD_TEXT, safe='')}&template_version=1"
    answer = requests.get(f"{gateway.url}/v1/messages?{by_event}", timeout=REQUEST_TIMEOUT_SECONDS)
    assert answer.status_code == 200 and answer.json()["history"], answer.text


# --- readable local output --------------------------------------------------------------------
def test_outbox_and_events_print_readable_rows(gateway: Gateway, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "--endpoint", gateway.url, "outbox")
    assert code == 0, err
    assert "Reset your password" in out and "https://app.example.com/reset?token=abc" in out
    assert "<html" not in out and "<p>" not in out
    code, out, err = call(capsys, "--endpoint", gateway.url, "events")
    assert code == 0, err
    assert "accepted -> delivered" in out and "msg_01OUTBOX" in out and "bounced" in out
    assert "{'" not in out and "'state':" not in out


# --- echoed input ---------------------------------------------------------------------------------
def test_a_problem_quotes_at_most_200_characters_of_what_was_sent(gateway: Gateway) -> None:
    long_id = "x" * 20_000
    paths = [f"/v1/messages/msg_{long_id}", f"/v1/password-resets/{long_id}"]
    for path in paths:
        answer = requests.get(f"{gateway.url}{path}", timeout=REQUEST_TIMEOUT_SECONDS)
        assert answer.status_code == 404 and answer.headers["Content-Type"] == "application/problem+json"
        detail = answer.json()["detail"]
        assert "x" * 190 in detail and len(detail) < 260 and "more characters" in detail, path[:40]
    webhook = requests.post(f"{gateway.url}/v1/providers/{long_id}/events", json={}, timeout=REQUEST_TIMEOUT_SECONDS)
    assert webhook.status_code == 404 and len(webhook.json()["detail"]) < 260


# --- HEAD ---------------------------------------------------------------------------------------
def test_head_answers_as_get_without_a_body(gateway: Gateway) -> None:
    body = {"channel": "email", "to": "bob@example.com", "template": {"id": "alert", "version": "1"}}
    sent = requests.post(
        f"{gateway.url}/v1/messages",
        json={**body, "params": {"summary": "x"}},
        headers={"Idempotency-Key": "head-1"},
        timeout=REQUEST_TIMEOUT_SECONDS,
    ).json()
    paths = [
        f"/v1/messages/{sent['message_id']}",
        "/v1/messages?idempotency_key=head-1",
        "/v1/suppressions/bob%40example.com",
        "/v1/messages/msg_00000000000000000000000000",  # a 404 is a 404 either way
        "/healthz",
        "/openapi.json",
    ]
    for path in paths:
        get = requests.get(f"{gateway.url}{path}", timeout=REQUEST_TIMEOUT_SECONDS)
        head = requests.head(f"{gateway.url}{path}", timeout=REQUEST_TIMEOUT_SECONDS)
        assert (head.status_code, head.content) == (get.status_code, b""), path
        assert head.headers["Content-Type"] == get.headers["Content-Type"], path
        assert head.headers["Content-Length"] == str(len(get.content)) != "0", path
    refused = requests.post(f"{gateway.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS)
    assert refused.status_code == 405 and refused.headers["Allow"] == "GET, HEAD"
    assert (
        requests.head(f"{gateway.url}/v1/password-resets/consume", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 405
    )
