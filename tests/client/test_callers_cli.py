"""`sendledger callers ...` against a scripted transport: the requests it makes, what it prints,
and every failure as one line on stderr with its exit code."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sendledger_client import SendledgerClient
from sendledger_client.cli import EXIT_REFUSED, EXIT_USAGE, main

from tests.client.test_client import Scripted, Time, answer

CALLER_ID = "0123456789abcdef01234567"
ARN = "arn:aws:iam::123456789012:role/orders"
VIEW = {
    "caller_id": CALLER_ID,
    "principal": None,
    "callback_url": "https://hooks.example.com/x",
    "test_mode": False,
    "flag_context": {},
    "updated_at": "2026-12-01T00:00:00.000Z",
    "updated_by": "arn:aws:iam::123456789012:role/admin",
    "version": 1,
    "callback_secret": {"configured": True, "rotating": False, "rotated_at": None},
    "new_secret": None,
}
TOO_SOON = {
    "type": "https://sendledger.dev/problems/rotation-too-recent",
    "title": "Conflict",
    "status": 409,
    "detail": "the callbacks Lambda may still sign with the previous secret alone: end the rotation later",
}


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answers: list[Any], *args: str
) -> tuple[int, str, str, Scripted]:
    transport, time = Scripted(answers), Time()
    made = SendledgerClient("http://127.0.0.1:8080", transport, clock=time.clock, sleep=time.sleep)
    monkeypatch.setattr(SendledgerClient, "connect", classmethod(lambda cls, *a, **k: made))
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err, transport


def test_set_by_principal_looks_the_id_up_and_prints_the_new_secret_once(monkeypatch, capsys) -> None:
    made = {**VIEW, "new_secret": "s" * 43}
    code, out, err, transport = run(
        monkeypatch, capsys, [answer(200, {**VIEW, "principal": ARN}), answer(200, made)],
        "callers", "set", ARN, "--callback-url", "https://hooks.example.com/x", "--test-mode",
        "--flag-context", "plan=gold",
    )  # fmt: skip
    assert code == 0 and err == ""
    find, put = transport.sent
    assert find.method == "GET" and parse_qs(urlsplit(find.url).query) == {"principal": [ARN]}
    assert put.method == "PUT" and urlsplit(put.url).path == f"/v1/admin/callers/{CALLER_ID}"
    assert json.loads(put.body or b"") == {
        "callback_url": "https://hooks.example.com/x",
        "test_mode": True,
        "flag_context": {"plan": "gold"},
    }
    assert "s" * 43 in out and "shown once" in out


def test_no_callback_sends_null_and_json_prints_the_apis_answer(monkeypatch, capsys) -> None:
    code, out, _, transport = run(
        monkeypatch, capsys, [answer(200, {**VIEW, "callback_url": None})],
        "--json", "callers", "set", CALLER_ID, "--no-callback",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["callback_url"] is None
    assert json.loads(transport.sent[0].body or b"") == {"callback_url": None}


def test_sms_rules_and_a_reason_go_in_one_put_and_the_history_is_printed(monkeypatch, capsys) -> None:
    history = [{"at": "2026-12-06T12:00:00.000Z", "actor": "arn:aws:iam::123456789012:role/ops", "reason": "pumping"}]
    ruled = {
        **VIEW,
        "sms_countries": {"allow": ["GB", "IE"]},
        "sms_daily_segments": 20,
        "sms_segments_today": 7,
        "history": [{**history[0], "changed": {"sms_daily_segments": 20}}],
    }
    code, out, _, transport = run(
        monkeypatch, capsys, [answer(200, ruled)],
        "callers", "set", CALLER_ID, "--sms-allow", "gb, ie", "--sms-daily-segments", "20", "--reason", "pumping",
    )  # fmt: skip
    assert code == 0
    assert json.loads(transport.sent[0].body or b"") == {
        "sms_countries": {"allow": ["GB", "IE"]},
        "sms_daily_segments": 20,
        "reason": "pumping",
    }
    assert '"allow": ["GB", "IE"]' in out and "pumping" in out and "role/ops" in out
    code, _, _, transport = run(
        monkeypatch, capsys, [answer(200, VIEW)], "callers", "set", CALLER_ID, "--no-sms-countries", "--no-sms-cap"
    )
    assert code == 0 and json.loads(transport.sent[0].body or b"") == {
        "sms_countries": None,
        "sms_daily_segments": None,
    }


def test_rotate_and_show(monkeypatch, capsys) -> None:
    rotated = {**VIEW, "new_secret": "n" * 43, "callback_secret": {"configured": True, "rotating": True}}
    code, out, _, transport = run(monkeypatch, capsys, [answer(200, rotated)], "callers", "rotate-secret", CALLER_ID)
    assert code == 0 and "n" * 43 in out and "rotating" in out
    assert (transport.sent[0].method, urlsplit(transport.sent[0].url).path) == (
        "POST",
        f"/v1/admin/callers/{CALLER_ID}/secret",
    )
    code, out, _, _ = run(monkeypatch, capsys, [answer(200, VIEW)], "callers", "show", CALLER_ID)
    assert code == 0 and "hooks.example.com" in out and "n" * 43 not in out


def test_end_rotation_too_soon_is_one_line_and_exit_1_without_waiting(monkeypatch, capsys) -> None:
    code, out, err, transport = run(
        monkeypatch, capsys, [answer(409, TOO_SOON, retry_after="300")], "callers", "end-rotation", CALLER_ID
    )
    assert code == EXIT_REFUSED and out == "" and len(transport.sent) == 1
    assert err.count("\n") == 1 and "409 Conflict" in err and "end the rotation later" in err
    assert transport.sent[0].method == "DELETE"


@pytest.mark.parametrize(
    "args",
    [
        ("callers", "set", CALLER_ID),
        ("callers", "set", CALLER_ID, "--callback-url", "https://x.example/", "--no-callback"),
        ("callers", "set", CALLER_ID, "--flag-context", "no-equals"),
        ("callers", "set", CALLER_ID, "--flag-context", "a=b", "--clear-flag-context"),
        ("callers", "set", CALLER_ID, "--sms-allow", "GB", "--sms-block", "US"),
        ("callers", "set", CALLER_ID, "--sms-daily-segments", "20", "--no-sms-cap"),
        ("callers", "set", CALLER_ID, "--reason", "nothing else"),
        ("callers", "show"),
    ],
)
def test_usage_errors_are_one_line_and_exit_64(monkeypatch, capsys, args) -> None:
    code, out, err, transport = run(monkeypatch, capsys, [], *args)
    assert code == EXIT_USAGE and out == "" and transport.sent == []
    assert err.count("\n") == 1 and err.startswith("sendledger: usage:")


def test_json_failures_are_one_json_object(monkeypatch, capsys) -> None:
    problem = {"type": "x/not-admin", "title": "Forbidden", "status": 403, "detail": "not an admin"}
    code, _, err, _ = run(monkeypatch, capsys, [answer(403, problem)], "--json", "callers", "show", CALLER_ID)
    assert code == EXIT_REFUSED and json.loads(err)["type"] == "x/not-admin" and json.loads(err)["exit_code"] == 1
