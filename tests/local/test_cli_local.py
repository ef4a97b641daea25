"""The `sendledger` command end to end: the installed script against `python -m local` over HTTP."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from sendledger.domain.clock import iso
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.test_local_stack_http import StackProcess, stack

__all__ = ["stack"]  # the module-scoped local stack (its own process for this module)

COMMAND = Path(sys.executable).parent / "sendledger"
LINK = re.compile(r"token=([A-Za-z0-9_-]+)")


def sendledger(stack: StackProcess, *args: str) -> subprocess.CompletedProcess[str]:
    assert COMMAND.exists(), f"{COMMAND} missing: the Makefile bootstrap installs it (pip install -e client)"
    return subprocess.run(
        [str(COMMAND), "--endpoint", stack.url, *args],
        capture_output=True,
        text=True,
        timeout=REQUEST_TIMEOUT_SECONDS * 4,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def send(stack: StackProcess, summary: str) -> dict:
    out = ok(
        sendledger(
            stack, "--json", "send", "--channel", "email", "--to", "success@simulator.amazonses.com",
            "--template", "alert", "--param", f"summary={summary}",
        )
    )  # fmt: skip
    view = json.loads(out)
    assert view["state"] == "accepted", view
    return view


def test_export_writes_every_message_of_the_window_once(stack: StackProcess, tmp_path: Path) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    sent = [send(stack, f"disk {n}")["message_id"] for n in range(5)]
    until = datetime.now(UTC) + timedelta(seconds=1)
    out = tmp_path / "evidence.jsonl"
    window = ("--since", iso(since), "--until", iso(until))
    ok(sendledger(stack, "export", *window, "--format", "jsonl", "--limit", "2", "--out", str(out)))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["message_id"] for line in lines) == sorted(sent), "each message once, across three pages"
    assert all(line["history"] for line in lines)
    # CSV: a header row and one row per message
    rows = list(csv.DictReader(io.StringIO(ok(sendledger(stack, "export", *window, "--format", "csv")))))
    assert sorted(row["message_id"] for row in rows) == sorted(sent)
    assert rows[0]["template_id"] == "alert" and rows[0]["state"] and rows[0]["created_at"]


def test_reset_shows_token_versions_and_the_accepted_message_without_a_token(stack: StackProcess) -> None:
    answer = requests.post(
        f"{stack.url}/v1/password-resets",
        json={"account_id": f"acct-cli-{datetime.now(UTC).timestamp()}", "email": "success@simulator.amazonses.com"},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    reset_id = answer.json()["reset_id"]
    ok(sendledger(stack, "poll"))
    outbox = json.loads(ok(sendledger(stack, "--json", "outbox")))
    tokens = [match.group(1) for entry in outbox if (match := LINK.search(entry.get("text") or ""))]
    assert tokens, outbox
    evidence = json.loads(ok(sendledger(stack, "--json", "reset", reset_id)))
    [message] = evidence["messages"]
    assert message["state"] == "accepted" and evidence["token_versions"][0]["version"] == 1
    shown = ok(sendledger(stack, "reset", reset_id))
    assert "token versions" in shown and message["message_id"] in shown and reset_id in shown
    assert not any(token in shown for token in tokens)


def test_a_problem_exits_non_zero_with_its_title_and_detail(stack: StackProcess) -> None:
    result = sendledger(stack, "show", "msg_00000000000000000000000000")
    assert result.returncode == 1 and result.stdout == ""
    assert "404 Not Found" in result.stderr and "no message" in result.stderr
    bad = sendledger(stack, "export", "--since", "yesterday", "--until", "2026-01-01T00:00:00Z")
    assert bad.returncode == 1 and "400 Bad Request" in bad.stderr and "since" in bad.stderr


@pytest.mark.parametrize("args", [("find",), ("find", "--event-id", "e")])
def test_find_needs_one_form(stack: StackProcess, args: tuple[str, ...]) -> None:
    result = sendledger(stack, *args)
    assert result.returncode != 0 and "--idempotency-key" in result.stderr


def test_find_by_key(stack: StackProcess) -> None:
    out = ok(
        sendledger(
            stack, "--json", "send", "--channel", "email", "--to", "success@simulator.amazonses.com",
            "--template", "alert", "--param", "summary=x", "--idempotency-key", "cli-find-1",
        )
    )  # fmt: skip
    found = json.loads(ok(sendledger(stack, "--json", "find", "--idempotency-key", "cli-find-1")))
    assert found["message_id"] == json.loads(out)["message_id"] and found["history"]


def test_callers_set_a_local_receiver_and_refuse_an_internal_one(stack: StackProcess) -> None:
    app = "arn:aws:iam::123456789012:user/app"
    # Locally a loopback receiver is allowed (the local stack's allowance); its secret is shown once
    made = json.loads(ok(sendledger(stack, "--json", "callers", "set", app, "--callback-url", "http://127.0.0.1:9/h")))
    assert made["callback_url"] == "http://127.0.0.1:9/h" and made["principal"] is None
    shown = json.loads(ok(sendledger(stack, "--json", "callers", "show", app)))
    assert shown["caller_id"] == made["caller_id"] and shown["principal"] == app and shown["new_secret"] is None
    # An internal address is refused everywhere: one line, exit 1, nothing changed
    refused = sendledger(stack, "callers", "set", made["caller_id"], "--callback-url", "https://10.0.0.5/h")
    assert refused.returncode == 1 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert "400 Bad Request" in refused.stderr and "not-public" in refused.stderr
    rotated = json.loads(ok(sendledger(stack, "--json", "callers", "rotate-secret", made["caller_id"])))
    assert rotated["new_secret"] and rotated["callback_secret"]["rotating"] is True
    early = sendledger(stack, "callers", "end-rotation", made["caller_id"])
    assert early.returncode == 1 and "409 Conflict" in early.stderr
