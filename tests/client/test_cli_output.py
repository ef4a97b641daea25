"""What `sendledger` prints for people: the outbox's links whole at any width, a message's
provider, a poll cycle as rows, a problem's detail said once, a malformed --endpoint named."""

from __future__ import annotations

import json
import os
import re

import pytest
from sendledger_client import cli

from tests.client.test_callers_cli import run
from tests.client.test_client import answer

TOKEN = "Q2xqN0tZb3ZpdW1hQ2F0aGVkcmFsUGFydHlMaW5lMA8"  # 43 characters, as tokens.mint makes them
LINK = f"https://app.example.com/reset?token={TOKEN}"
RESET_TEXT = (
    "Someone asked to reset the password of your account.\n\nOpen this link within 10 minutes to choose a "
    f"new one:\n{LINK}\n\nIf it was not you, ignore this message; your password stays the same.\n"
)
OUTBOX = [
    {
        "message_id": "msg_01JEXAMPLERESETMAIL0000000",
        "channel": "email",
        "provider": "ses",
        "to": "bob@example.com",
        "subject": "Reset your password",
        "text": RESET_TEXT,
        "sent_at": "2026-12-03T12:00:00.000Z",
    }
]
MESSAGE = {
    "message_id": "msg_1",
    "state": "accepted",
    "channel": "email",
    "to": "bob@example.com",
    "template": {"id": "alert", "version": "1"},
    "category": "alert",
    "provider": "mailgun",
    "provider_message_id": "<20261203.1@mg.example.com>",
    "reason": None,
    "created_at": "2026-12-03T12:00:00.000Z",
    "updated_at": "2026-12-03T12:00:00.100Z",
}


@pytest.mark.parametrize("width", [80, 120, 200])
def test_outbox_prints_a_reset_link_unbroken_at_any_width(monkeypatch, capsys, width: int) -> None:
    monkeypatch.setattr(cli, "PIPED_WIDTH", width)
    code, out, err, _ = run(monkeypatch, capsys, [answer(200, OUTBOX)], "outbox")
    assert code == 0, err
    # The text part, below the table, on one line that starts with its message's id
    assert out.splitlines()[-1].startswith(f"{OUTBOX[0]['message_id']}: Someone asked") and LINK in out.splitlines()[-1]


def test_a_message_shows_the_provider_that_carried_it(monkeypatch, capsys) -> None:
    code, out, err, _ = run(monkeypatch, capsys, [answer(200, MESSAGE)], "show", "msg_1")
    assert code == 0, err
    assert re.search(r"│ provider\s+│ mailgun\s+│", out), out


def test_poll_prints_what_the_cycle_did_as_rows_and_json_only_when_asked(monkeypatch, capsys) -> None:
    cycle = {
        "flush": {"ses_events_published": 2, "sms_records_delivered": 0},
        "poller": {
            "applied": 2,
            "duplicates": 0,
            "read_to_end": {"ses": True},
            "resolved": {"absence_proven": 1},
            "resolved_messages": [{"message_id": "msg_LOST", "outcome": "absence_proven"}],
            "escalated": 0,
        },
    }
    code, out, err, _ = run(monkeypatch, capsys, [answer(200, cycle)], "poll")
    assert code == 0, err
    assert "{" not in out and '"' not in out
    for row in (
        r"ses_events_published\s+│ 2",
        r"applied\s+│ 2",
        r"absence_proven\s+│ 1",
        r"msg_LOST\s+│ absence_proven",
    ):
        assert re.search(row, out), (row, out)
    assert "duplicates" not in out and "sms_records_delivered" not in out  # nothing done: no row
    code, out, err, _ = run(monkeypatch, capsys, [answer(200, cycle)], "--json", "poll")
    assert code == 0 and json.loads(out) == cycle


def test_a_problem_line_says_a_field_error_the_detail_already_says_once(monkeypatch, capsys) -> None:
    refused = {
        "type": "https://sendledger.dev/problems/invalid-request",
        "title": "Bad Request",
        "status": 400,
        "detail": "since: not an RFC 3339 time",
        "errors": [{"field": "since", "message": "not an RFC 3339 time"}],
    }
    code, out, err, _ = run(monkeypatch, capsys, [answer(400, refused)], "export", "--since", "x", "--until", "y")
    assert code == cli.EXIT_REFUSED
    assert err.count("not an RFC 3339 time") == 1, err
    schema = {**refused, "detail": "the request does not match the schema"}
    code, out, err, _ = run(monkeypatch, capsys, [answer(400, schema)], "export", "--since", "x", "--until", "y")
    assert "the request does not match the schema (since: not an RFC 3339 time)" in err


@pytest.mark.parametrize("endpoint", ["127.0.0.1:8080", "notaurl", "http://", "http://127.0.0.1:http"])
@pytest.mark.parametrize("configured", [True, False])
def test_a_malformed_endpoint_is_a_usage_error_that_names_it(monkeypatch, capsys, endpoint, configured) -> None:
    for name in [name for name in os.environ if name.startswith(("AWS_", "SENDLEDGER_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    if configured:  # credentials and a region: signing would go ahead
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE000000000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example-secret")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    with pytest.raises(SystemExit) as done:
        cli.main(["--endpoint", endpoint, "show", "msg_1"])
    out, err = capsys.readouterr()
    assert done.value.code == cli.EXIT_USAGE and out == ""
    (line,) = err.strip().splitlines()
    assert f"{endpoint!r} is not an http(s) URL" in line and "--endpoint" in line, line
    if endpoint == "127.0.0.1:8080":
        assert "did you mean http://127.0.0.1:8080?" in line
