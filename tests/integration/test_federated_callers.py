"""Federated users are names anyone allowed sts:GetFederationToken can take: not callers.

The review's reproduction: two credentials (say two IAM users of the account, each calling
GetFederationToken with Name=bob) both sign as `federated-user/bob`; API Gateway hands the api
the same `userArn` for both, so whatever the first sent the second could read.
"""

from __future__ import annotations

from tests.support.fakes import ADMIN

BOB = "arn:aws:sts::123456789012:federated-user/bob"  # the same ARN, whichever credential got the token
ALERT = {"channel": "email", "to": "ops@example.com", "template": {"id": "alert", "version": "1"}, "params": {}}


def send_as(api, principal: str, key: str):  # type: ignore[no-untyped-def]
    body = {**ALERT, "params": {"summary": "s"}}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, principal=principal)


def test_a_second_credential_signing_as_the_same_federated_name_reads_nothing_of_the_first(api):
    # Given the first credential, federated as bob, sends a message
    status, _, sent = send_as(api, BOB, "fed-1")
    # Then it is refused: a federated name is no caller, and the answer says what to use instead
    assert status == 403 and sent["type"].endswith("/unknown-caller")
    assert "GetFederationToken" in sent["detail"] and "role" in sent["detail"]
    # And the second credential, federated as bob too, finds nothing under that name
    status, _, found = api("GET", "/v1/messages", query={"idempotency_key": "fed-1"}, principal=BOB)
    assert status == 403 and found["type"].endswith("/unknown-caller")
    # While a role's message stays its own
    status, _, view = send_as(api, "arn:aws:sts::123456789012:assumed-role/orders/task-1", "fed-1")
    assert status == 202
    assert api("GET", f"/v1/messages/{view['message_id']}", principal=BOB)[0] == 403


def test_a_federated_user_is_no_admin(api):
    path = f"/v1/admin/callers/{'a' * 24}"
    status, _, problem = api("GET", path, principal=BOB)
    assert status == 403 and problem["type"].endswith("/unknown-caller")
    assert api("GET", path, principal=ADMIN)[0] == 200


def test_a_federated_name_the_deployer_named_in_caller_tenants_is_that_tenant(api):
    # The documented opt-in: the deployer accepts that whoever may federate as bob is the tenant
    api.services.settings = api.services.settings.replace({"caller_tenants": {BOB: "bob-team"}})
    status, _, view = send_as(api, BOB, "fed-2")
    assert status == 202
    assert api("GET", f"/v1/messages/{view['message_id']}", principal=BOB)[0] == 200
