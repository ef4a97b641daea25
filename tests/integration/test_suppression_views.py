"""A recipient's suppression as each audience sees it: a caller its own evidence, an admin all.

The review found a client's view carrying the admin's ARN and free-text reason, and the
provider event ids (another tenant's SES message id) of suppressions other callers' sends
caused.
"""

from __future__ import annotations

import json

from tests.integration.conftest import ses_record
from tests.support.fakes import ADMIN, PRINCIPAL

OTHER = "arn:aws:sts::123456789012:assumed-role/billing-service/task-1"
BOB = "bob@example.com"
PATH = "/v1/suppressions/bob%40example.com"


def send(api, principal: str, key: str) -> dict:
    body = {"channel": "email", "to": BOB, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, principal=principal)
    assert status == 202, view
    return view


def bounce(api, ingestion, clock, view: dict, ses_id: str) -> None:
    ingestion.publish(ses_record("Bounce", view["message_id"], BOB, clock.now(), ses_id))
    clock.advance(1)
    assert ingestion.poll().suppressed == 1


def test_a_caller_sees_state_class_and_only_what_its_own_messages_caused(api, ingestion, clock, healthy_watermarks):
    # Given the other caller's send bounced (its SES message id is its evidence), an admin lifted
    # the suppression with a free-text reason, and then our send bounced too
    theirs = send(api, OTHER, "v-1")
    bounce(api, ingestion, clock, theirs, "0100018c-THEIRS-000001")
    lifted = api("DELETE", "/v1/admin/suppressions/bob%40example.com", query={"reason": "customer called, ticket 4411"})
    assert lifted[0] == 200
    ours = send(api, PRINCIPAL, "v-2")
    bounce(api, ingestion, clock, ours, "0100018c-OURS-0000002")
    # When each reads the recipient
    status, _, mine = api("GET", PATH, principal=PRINCIPAL)
    _, _, other = api("GET", PATH, principal=OTHER)
    _, _, admin = api("GET", "/v1/admin/suppressions/bob%40example.com", principal=ADMIN)
    assert status == 200
    # Then each caller sees the state, its class, since and version...
    for view in (mine, other):
        assert (view["suppressed"], view["reason_class"], view["version"]) == (True, "bounce", 3)
        assert view["since"] == admin["since"] and "reason" not in view
    # ...and only the entries its own messages caused
    assert [e["message_id"] for e in mine["history"]] == [ours["message_id"]]
    assert [e["message_id"] for e in other["history"]] == [theirs["message_id"]]
    shown = json.dumps(mine)
    for secret in (ADMIN, "ticket 4411", "THEIRS", theirs["message_id"]):
        assert secret not in shown, secret
    assert other["history"][0]["source"] == "ses" and other["history"][0]["event_id"]  # its own evidence, whole
    # And the admin sees all of it: the actor, the free-text reason, every event
    assert admin["reason"] == "bounce: Permanent/General" and admin["reason_class"] == "bounce"
    entries = admin["history"]
    assert [e["type"] for e in entries] == ["suppressed", "unsuppressed", "suppressed"]
    assert entries[1]["actor"] == ADMIN and entries[1]["reason"] == "customer called, ticket 4411"
    assert {e.get("message_id") for e in entries} >= {ours["message_id"], theirs["message_id"]}


def test_an_admin_suppression_is_class_admin_and_its_words_stay_the_admins(api, healthy_watermarks):
    assert api("PUT", "/v1/admin/suppressions/bob%40example.com", {"reason": "legal hold, case 77"})[0] == 200
    _, _, mine = api("GET", PATH, principal=PRINCIPAL)
    assert (mine["suppressed"], mine["reason_class"], mine["history"]) == (True, "admin", [])
    assert "legal hold" not in json.dumps(mine) and ADMIN not in json.dumps(mine)
    # the admin's view of the same is refused to a caller
    assert api("GET", "/v1/admin/suppressions/bob%40example.com", principal=PRINCIPAL)[0] == 403
