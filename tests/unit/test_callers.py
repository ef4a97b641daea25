"""Callers from `requestContext.identity` as API Gateway's IAM authorization hands it over.

The identities are the shapes AWS documents (CloudTrail's userIdentity examples, IAM's
aws:userid table): `userArn` is the signer's ARN, `caller`/`user` its unique id.
"""

from __future__ import annotations

import hashlib

import pytest

from sendledger.domain.callers import PrincipalKind, caller_of, configured_principal, is_admin, principal_of
from sendledger.domain.errors import UnknownCaller
from sendledger.settings import Settings, SettingsError

ACCOUNT = "123456789012"


def identity(user_arn: str, caller: str, access_key: str = "ASIAIOSFODNN7EXAMPLE") -> dict[str, str | None]:
    return {
        "cognitoIdentityPoolId": None,
        "accountId": ACCOUNT,
        "cognitoIdentityId": None,
        "caller": caller,
        "sourceIp": "198.51.100.7",
        "principalOrgId": None,
        "accessKey": access_key,
        "cognitoAuthenticationType": None,
        "cognitoAuthenticationProvider": None,
        "userArn": user_arn,
        "userAgent": "Boto3/1.44.5 md/Botocore#1.44.5",
        "user": caller,
    }


IAM_USER = identity(f"arn:aws:iam::{ACCOUNT}:user/Alice", "AIDAJ45Q7YFFAREXAMPLE", "AKIAIOSFODNN7EXAMPLE")
ECS_TASK_1 = identity(
    f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-service/3f2b0c1e9d8a4b7c", "AROAIDPPEZS35WEXAMPLE:3f2b0c1e9d8a4b7c"
)
ECS_TASK_2 = identity(
    f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-service/9a8b7c6d5e4f4a3b", "AROAIDPPEZS35WEXAMPLE:9a8b7c6d5e4f4a3b"
)
LAMBDA_ROLE = identity(
    f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-api-role-1a2b3c4d/orders-api", "AROA3XFRBF535PLBIFPI4:orders-api"
)
FEDERATED = identity(f"arn:aws:sts::{ACCOUNT}:federated-user/Bob", f"{ACCOUNT}:Bob")
ROOT = identity(f"arn:aws:iam::{ACCOUNT}:root", ACCOUNT, "AKIAIOSFODNN7EXAMPLE")


def caller(shape: dict[str, str | None], tenants: dict[str, str] | None = None):
    arn = shape["userArn"]
    assert arn is not None
    return caller_of(arn, tenants or {})


def test_sessions_of_one_role_are_one_caller_the_role():
    first, second = caller(ECS_TASK_1), caller(ECS_TASK_2)
    assert first == second and first.id == second.id
    assert first.principal.arn == f"arn:aws:iam::{ACCOUNT}:role/orders-service"
    assert first.principal.kind is PrincipalKind.ROLE


# A federated name is no caller unless the deployer maps it to a tenant, which is then its identity.
@pytest.mark.parametrize("kind", ["assumed-role/orders-service/3f2b0c1e9d8a4b7c", "user/Alice"])
def test_one_name_in_two_accounts_is_two_callers(kind: str):
    prefix = "iam" if kind.startswith("user/") else "sts"
    here, there = (caller_of(f"arn:aws:{prefix}::{account}:{kind}", {}) for account in (ACCOUNT, "210987654321"))
    assert here.principal.name == there.principal.name
    assert here.id != there.id, "names are unique within an account only"


def test_a_lambda_execution_role_is_its_role():
    assert caller(LAMBDA_ROLE).principal.arn == f"arn:aws:iam::{ACCOUNT}:role/orders-api-role-1a2b3c4d"


def test_users_and_root_keep_the_id_their_arn_always_had():
    # The id before callers were normalised: sha256(userArn)[:24]. Their keys stay theirs.
    for shape in (IAM_USER, ROOT):
        arn = shape["userArn"]
        assert arn is not None
        assert caller(shape).id == hashlib.sha256(arn.encode()).hexdigest()[:24], arn
        assert caller(shape).principal.arn == arn
    assert caller(ROOT).principal.kind is PrincipalKind.ROOT


def test_every_kind_is_a_different_caller():
    federated = caller(FEDERATED, {FEDERATED["userArn"] or "": "bob-tenant"})
    ids = {caller(shape).id for shape in (IAM_USER, ECS_TASK_1, LAMBDA_ROLE, ROOT)} | {federated.id}
    assert len(ids) == 5


def test_a_federated_user_is_refused_as_a_caller_with_what_to_use_instead():
    # Its name is whatever the caller of sts:GetFederationToken picked: not an identity
    with pytest.raises(UnknownCaller) as refused:
        caller(FEDERATED)
    assert "GetFederationToken" in refused.value.detail and "role" in refused.value.detail
    assert "CALLER_TENANTS" in refused.value.detail
    assert principal_of(FEDERATED["userArn"] or "").kind is PrincipalKind.FEDERATED_USER


def test_a_federated_user_named_in_caller_tenants_is_that_tenant_and_never_an_admin():
    arn = FEDERATED["userArn"] or ""
    settings = Settings.from_env({"CALLER_TENANTS": f"{arn}=bob-tenant"})
    assert caller(FEDERATED, settings.caller_tenants).tenant == "bob-tenant"
    with pytest.raises(SettingsError, match="GetFederationToken"):
        Settings.from_env({"ADMIN_PRINCIPALS": arn})
    with pytest.raises(ValueError, match="federated user is a name"):
        configured_principal(arn)


def test_paths_do_not_make_another_principal():
    # A user ARN may carry its path; an STS ARN never carries the role's.
    assert principal_of(f"arn:aws:iam::{ACCOUNT}:user/division/team/Alice").arn == IAM_USER["userArn"]
    assert configured_principal(f"arn:aws:iam::{ACCOUNT}:role/service-role/orders-service") == (
        caller(ECS_TASK_1).principal.arn
    )
    assert principal_of(f"arn:aws-cn:sts::{ACCOUNT}:assumed-role/r/s1").arn == f"arn:aws-cn:iam::{ACCOUNT}:role/r"


@pytest.mark.parametrize(
    "arn",
    [
        "",
        "AROAIDPPEZS35WEXAMPLE:3f2b0c1e9d8a4b7c",  # a caller id, not an ARN
        f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-service",  # no session
        f"arn:aws:iam::{ACCOUNT}:group/admins",  # groups never sign
        f"arn:aws:iam::{ACCOUNT}:user/",
        "arn:aws:iam::1234:user/Alice",  # not a 12-digit account
        f"arn:aws:s3:::{ACCOUNT}",
        f"arn:aws:iam::{ACCOUNT}:user/Al ice",
        "x" * 5000,
    ],
)
def test_an_identity_that_names_no_principal_is_refused(arn):
    with pytest.raises(UnknownCaller):
        caller_of(arn, {})


def test_a_tenant_mapping_makes_several_roles_one_caller():
    tenants = Settings(
        caller_tenants=(
            f"arn:aws:iam::{ACCOUNT}:role/service-role/orders-service=acme "
            f"arn:aws:iam::{ACCOUNT}:role/orders-api-role-1a2b3c4d=acme"
        )
    ).caller_tenants
    assert caller(ECS_TASK_2, tenants).id == caller(LAMBDA_ROLE, tenants).id
    assert caller(ECS_TASK_2, tenants).tenant == "acme"
    assert caller(IAM_USER, tenants).id == caller(IAM_USER).id, "an unmapped principal is itself"


def test_settings_refuse_sessions_bad_arns_and_bad_tenants():
    session = f"arn:aws:sts::{ACCOUNT}:assumed-role/ops/alice"
    with pytest.raises(SettingsError, match=f"give the role, arn:aws:iam::{ACCOUNT}:role/ops"):
        Settings.from_env({"ADMIN_PRINCIPALS": session})
    with pytest.raises(SettingsError, match="CALLER_TENANTS"):
        Settings.from_env({"CALLER_TENANTS": f"arn:aws:iam::{ACCOUNT}:role/x=not/a/tenant"})
    with pytest.raises(SettingsError, match="ADMIN_PRINCIPALS"):
        Settings.from_env({"ADMIN_PRINCIPALS": "alice"})


def test_admins_are_principals_named_in_settings_whatever_their_path_or_session():
    admins = Settings.from_env(
        {"ADMIN_PRINCIPALS": f'["arn:aws:iam::{ACCOUNT}:role/ops/oncall", "arn:aws:iam::{ACCOUNT}:user/Alice"]'}
    ).admin_principals
    oncall = identity(f"arn:aws:sts::{ACCOUNT}:assumed-role/oncall/jane@example.com", "AROAEXAMPLE:jane@example.com")
    assert is_admin(caller(oncall), admins) and is_admin(caller(IAM_USER), admins)
    assert not is_admin(caller(ECS_TASK_1), admins)
    tenants = {f"arn:aws:iam::{ACCOUNT}:role/orders-service": "ops"}
    assert not is_admin(caller(ECS_TASK_1, tenants), admins), "a tenant's roles are not its admins"


def test_the_signer_is_read_where_either_payload_format_of_the_http_api_puts_it():
    """Format 1.0 (the deployed integration) in `identity`, 2.0 in `authorizer.iam`: a change of
    format must not make every caller unknown (nor fall back to the local principal)."""
    from sendledger.handlers.invocation import identity_arn

    arn = ECS_TASK_1["userArn"]
    assert identity_arn({"version": "1.0", "requestContext": {"identity": ECS_TASK_1}}) == arn
    v2 = {"authorizer": {"iam": {"accessKey": "ASIAIOSFODNN7EXAMPLE", "userArn": arn, "userId": "AROA:x"}}}
    assert identity_arn({"version": "2.0", "requestContext": v2}) == arn
    unsigned_v1 = {**ECS_TASK_1, "userArn": None}  # an open route's identity, beside a 2.0-style grant
    assert identity_arn({"requestContext": {"identity": unsigned_v1, **v2}}) == arn
