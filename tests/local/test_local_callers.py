"""Role sessions on the local gateway: signed, they reach the handler as API Gateway hands them over."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local.auth import LocalAuth
from local.constants import ENV_LOCAL_CREDENTIALS, LOCAL_PRINCIPAL
from local.gateway import Gateway
from local.stack import local_admins
from sendledger import names
from tests.local.sigv4_support import TASK_1, TASK_2, signed_request
from tests.local.test_local_gateway import FakeHandler


@pytest.fixture
def fake() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
def gateway(fake: FakeHandler) -> Iterator[Gateway]:
    gw = Gateway(fake, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0, auth=LocalAuth.from_env({}))
    gw.start()
    yield gw
    gw.stop()


def identities(fake: FakeHandler) -> list[dict[str, Any]]:
    return [event["requestContext"]["identity"] for event, _ in fake.calls]


def test_two_sessions_of_one_role_sign_as_their_sessions(gateway: Gateway, fake: FakeHandler) -> None:
    for credential in (TASK_1, TASK_2):
        assert signed_request("GET", f"{gateway.url}/healthz", credential=credential).status_code == 202
    first, second = identities(fake)
    assert first["userArn"] == "arn:aws:sts::123456789012:assumed-role/app-role/task-1"
    assert second["userArn"] == "arn:aws:sts::123456789012:assumed-role/app-role/task-2"
    # aws:userid of a session: the role's unique id (AROA...), then the session name
    role_id, _, session = first["caller"].partition(":")
    assert role_id.startswith("AROA") and session == "task-1" and first["user"] == first["caller"]
    assert second["caller"] == f"{role_id}:task-2"
    assert (first["accessKey"], second["accessKey"]) == ("AKIALOCALTASK000001", "AKIALOCALTASK000002")
    assert first["accountId"] == second["accountId"] == "123456789012"


def test_a_credential_may_carry_its_caller_arn_after_the_third_colon(fake: FakeHandler) -> None:
    raw = (
        "ci:AKIACI0000000000001:ci-secret:arn:aws:sts::210987654321:assumed-role/ci-role/run-1,"
        "bob:AKIABOB000000000001:bob-secret:arn:aws:sts::123456789012:federated-user/bob"
    )
    auth = LocalAuth.from_env({ENV_LOCAL_CREDENTIALS: raw})
    gw = Gateway(fake, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0, auth=auth)
    gw.start()
    try:
        for credential in auth.credentials:
            assert signed_request("GET", f"{gw.url}/healthz", credential=credential).status_code == 202
    finally:
        gw.stop()
    ci, bob = identities(fake)
    assert (ci["userArn"], ci["accountId"]) == ("arn:aws:sts::210987654321:assumed-role/ci-role/run-1", "210987654321")
    assert ci["caller"].endswith(":run-1")
    assert (bob["userArn"], bob["caller"]) == ("arn:aws:sts::123456789012:federated-user/bob", "123456789012:bob")
    for bad in ("ci:AKIACI1:s:arn:aws:sts::1:assumed-role/r/s1", "ci:AKIACI1:s:arn:aws:iam::123456789012:group/g"):
        with pytest.raises(ValueError, match=f"{ENV_LOCAL_CREDENTIALS}: credential 1"):
            LocalAuth.from_env({ENV_LOCAL_CREDENTIALS: bad})


def test_locally_the_admin_credential_and_the_unsigned_principal_are_the_admins() -> None:
    assert local_admins({}).split() == ["arn:aws:iam::123456789012:user/admin", LOCAL_PRINCIPAL]
    session = "admin:AKIAADMIN1:s:arn:aws:sts::123456789012:assumed-role/ops/me"
    assert local_admins({ENV_LOCAL_CREDENTIALS: session}).split()[0] == "arn:aws:iam::123456789012:role/ops"
