"""Two AWS accounts with one role name are two callers: nothing one scopes reaches the other.

Role and user names are unique within an account only; `app` in account A and `app` in account B
are two applications. Each route that scopes by caller is asked by both (keys, messages, resets,
exports, caller settings): a caller id computed from the name alone would merge them.
"""

from __future__ import annotations

from typing import Any

from sendledger.domain.callers import caller_of
from tests.integration.test_caller_routes import admin_api, put  # noqa: F401 (the fixture)
from tests.integration.test_evidence_routes import export_all
from tests.support.fakes import FakeClock

A = "arn:aws:sts::111111111111:assumed-role/app/task-1"
B = "arn:aws:sts::222222222222:assumed-role/app/task-1"  # the same role name and session, another account
ALERT = {"channel": "email", "template": {"id": "alert", "version": "1"}, "params": {"summary": "disk full"}}


def send(api: Any, principal: str, to: str, key: str = "order-1") -> tuple[int, Any]:
    status, _, view = api(
        "POST", "/v1/messages", {**ALERT, "to": to}, headers={"Idempotency-Key": key}, principal=principal
    )
    return status, view


def test_one_role_name_in_two_accounts_is_two_callers_everywhere(
    admin_api: Any,  # noqa: F811
    clock: FakeClock,
    healthy_watermarks: None,
) -> None:
    api = admin_api
    start = clock.now()
    # Keys: one idempotency key with another body is B's own message, not A's replay or conflict
    status_a, mine = send(api, A, "alice@example.com")
    status_b, theirs = send(api, B, "bob@example.com")
    assert (status_a, status_b) == (202, 202), (mine, theirs)
    assert mine["message_id"] != theirs["message_id"] and theirs["to"] == "bob@example.com"
    # Messages: each reads its own, by id and by key, and not the other's
    assert api("GET", f"/v1/messages/{mine['message_id']}", principal=A)[0] == 200
    assert api("GET", f"/v1/messages/{mine['message_id']}", principal=B)[0] == 404
    status, _, by_key = api("GET", "/v1/messages", query={"idempotency_key": "order-1"}, principal=B)
    assert status == 200 and by_key["message_id"] == theirs["message_id"]
    # Resets: one account id, two resets (a merged caller would answer B with A's reset)
    reset = {"account_id": "acct-1", "email": "carol@example.com"}
    status_a, _, reset_a = api("POST", "/v1/password-resets", reset, principal=A)
    status_b, _, reset_b = api("POST", "/v1/password-resets", reset, principal=B)
    assert (status_a, status_b) == (202, 202) and reset_a["reset_id"] != reset_b["reset_id"]
    assert api("GET", f"/v1/password-resets/{reset_a['reset_id']}", principal=B)[0] == 404
    # Exports: each caller's evidence holds its own messages only
    clock.advance(1)
    exported_b, _ = export_all(api, start, clock.now(), 10, principal=B)
    assert mine["message_id"] not in {line["message_id"] for line in exported_b}
    assert theirs["message_id"] in {line["message_id"] for line in exported_b}
    # Caller settings: test mode set for A is not B's
    a, b = caller_of(A, {}).id, caller_of(B, {}).id
    assert put(api, a, {"test_mode": True})[0] == 200
    status, _, settings_b = api("GET", f"/v1/admin/callers/{b}")
    assert status == 200 and settings_b["test_mode"] is False, settings_b
    status_a, test_send = send(api, A, "dave@example.com", key="order-2")
    status_b, real_send = send(api, B, "dave@example.com", key="order-2")
    assert test_send.get("test") is True and "test" not in real_send, (test_send, real_send)
