"""The audited admin acts on the suppression list: every act is recorded, only changes change state."""

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
