"""The audited admin acts on the suppression list: every act is recorded, only changes change state."""

import json

from sendledger.api.problems import PROBLEM_JSON, TYPE_BASE
from sendledger.settings import Settings
from tests.support.fakes import PRINCIPAL

RECIPIENT = "/v1/admin/suppressions/erin%40example.com"


def suppression(api):
    status, _, body = api("GET", "/v1/suppressions/erin%40example.com")
    assert status == 200, body
    return body


def test_repeated_suppress_is_audited_without_moving_version_or_since(api, clock):
    # Given an admin suppressed the address
    status, _, first = api("PUT", RECIPIENT, {"reason": "user asked"})
    assert status == 200 and first["suppressed"] is True and first["version"] == 1
    clock.advance(60)
    # When the same PUT is repeated later (a retried script, a second operator)
    status, _, again = api("PUT", RECIPIENT, {"reason": "user asked again"})
    # Then nothing about the suppression changed, but the act is on record with its actor and reason
    assert status == 200
    assert (again["suppressed"], again["version"], again["since"]) == (True, 1, first["since"])
    acts = [entry for entry in again["history"] if entry["source"] == "admin"]
    assert [a["reason"] for a in acts] == ["user asked", "user asked again"]
    assert acts[-1]["unchanged"] is True and acts[-1]["version"] == 1


def test_re_enabling_a_never_suppressed_address_changes_nothing_but_is_recorded(api):
    # When an admin lifts a suppression that does not exist
    status, _, body = api("DELETE", RECIPIENT + "?reason=cleanup")
    # Then the address stays sendable at version 0, and the act is recorded
    assert status == 200 and body["suppressed"] is False and body["version"] == 0
    assert [(e["type"], e["reason"], e["unchanged"]) for e in body["history"]] == [("unsuppressed", "cleanup", True)]
    # And a later real suppression starts from that version
    status, _, body = api("PUT", RECIPIENT, {"reason": "bounced"})
    assert body["version"] == 1 and body["suppressed"] is True


OPS_ROLE = "arn:aws:iam::123456789012:role/ops/oncall"  # an admin role with a path, as IAM lists it


def admins(services, *arns):
    services.settings = services.settings.replace(
        {"admin_principals": Settings(admin_principals=arns).admin_principals}
    )


def test_only_the_admin_principals_act_on_admin_routes_and_a_refusal_changes_nothing(api, services, capsys):
    admins(services, OPS_ROLE)
    capsys.readouterr()
    refused = [
        api("PUT", RECIPIENT, {"reason": "x"}, principal=PRINCIPAL),  # a client, with IAM access to the route
        api("PUT", RECIPIENT, {"reason": "x"}, principal="arn:aws:sts::123456789012:assumed-role/app-role/task-1"),
        api(
            "DELETE", RECIPIENT + "?reason=x", principal="arn:aws:iam::123456789012:user/oncall"
        ),  # a user, not the role
    ]
    for status, headers, body in refused:
        assert (status, headers["content-type"], body["type"]) == (403, PROBLEM_JSON, TYPE_BASE + "not-admin")
    assert suppression(api)["history"] == [] and suppression(api)["version"] == 0
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"AdminRefused"' in line]
    assert [metric["AdminRefused"] for metric in emitted] == [[1.0]] * 3
    # Any session of the admin role is the admin, whatever its session name; the act names the session
    oncall = "arn:aws:sts::123456789012:assumed-role/oncall/jane@example.com"
    status, _, body = api("PUT", RECIPIENT, {"reason": "complaint"}, principal=oncall)
    assert status == 200 and body["suppressed"] is True
    assert body["history"][-1]["actor"] == oncall


def test_an_unrecognised_identity_on_an_admin_route_is_a_403_before_any_body_check(api, services):
    admins(services, OPS_ROLE)
    status, _, body = api("PUT", RECIPIENT, {"unknown": "field"}, principal="AROAEXAMPLE:session")
    assert status == 403 and body["type"] == TYPE_BASE + "unknown-caller"
    status, _, body = api("PUT", RECIPIENT, {"unknown": "field"}, principal=PRINCIPAL)
    assert status == 403 and body["type"] == TYPE_BASE + "not-admin", "refused before the body is read"


def test_without_admin_principals_nobody_is_an_admin(api, services):
    admins(services)
    assert api("PUT", RECIPIENT, {"reason": "x"})[0] == 403
