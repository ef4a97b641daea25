"""Who is calling: the IAM identity API Gateway hands over, as one caller per application.

API Gateway's IAM authorization passes `requestContext.identity.userArn` as the signer's ARN.
For an assumed role that ARN names the *session* (`.../assumed-role/<role>/<session>`): every
ECS task, instance or Lambda container of one service signs as another session. The caller is
therefore the role (`arn:aws:iam::<acct>:role/<role>`), an IAM user the user, a federated
user its account and name, the root user its account. Role and user names are unique within
an account whatever their path, and an STS ARN carries no path, so ARNs given in settings
are compared without theirs.

A caller's id is a short hash of its normalised ARN (ARNs do not leak into keys or items), or
of its tenant when the settings map the principal to one (several roles, one tenant).

A federated user is refused: `federated-user/<name>` names whatever the caller of
sts:GetFederationToken chose, so any credential allowed that call can sign as any name, and
read what the name's earlier holder sent. It is a caller only where the deployer mapped that
very ARN to a tenant (CALLER_TENANTS), knowingly; never an admin.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import NewType

from sendledger.domain.errors import UnknownCaller
from sendledger.domain.values import value

CallerId = NewType("CallerId", str)  # what keys, messages, exports and resets are scoped by

_ARN = re.compile(r"arn:(?P<partition>aws(?:-[a-z]+)*):(?P<service>iam|sts)::(?P<account>\d{12}):(?P<resource>.+)")
_NAME = r"[\w+=,.@-]"
_PATH = r"(?:/[\x21-\x2e\x30-\x7e]+)*/"  # "/" or "/a/b/": any printable ASCII but "/" between slashes
_IAM = re.compile(rf"(?P<kind>user|role)(?P<path>{_PATH})(?P<name>{_NAME}{{1,64}})")
_SESSION = re.compile(rf"assumed-role/(?P<name>{_NAME}{{1,64}})/{_NAME}{{2,64}}")
_FEDERATED = re.compile(rf"federated-user/(?P<name>{_NAME}{{2,32}})")
TENANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ID_LENGTH = 24  # hex characters: 96 bits


class PrincipalKind(StrEnum):
    USER = "user"
    ROLE = "role"
    FEDERATED_USER = "federated-user"
    ROOT = "root"


@value
class Principal:
    """An IAM principal without session or path: what one application signs as."""

    kind: PrincipalKind
    partition: str
    account_id: str
    name: str  # the user, role or federated user's name; "" for the root user

    @property
    def arn(self) -> str:
        prefix = f"arn:{self.partition}"
        if self.kind is PrincipalKind.ROOT:
            return f"{prefix}:iam::{self.account_id}:root"
        if self.kind is PrincipalKind.FEDERATED_USER:
            return f"{prefix}:sts::{self.account_id}:federated-user/{self.name}"
        return f"{prefix}:iam::{self.account_id}:{self.kind.value}/{self.name}"


@value
class Caller:
    principal: Principal
    tenant: str | None = None  # from the settings' explicit mapping

    @property
    def id(self) -> CallerId:
        return hashed_id(f"tenant:{self.tenant}" if self.tenant else self.principal.arn)


def hashed_id(material: str) -> CallerId:
    """A stable, non-reversible id. For a principal it is the hash of its ARN, which for an IAM
    user without a path (and a federated or root user) is what `userArn` always was: their
    existing keys and messages stay theirs."""
    return CallerId(hashlib.sha256(material.encode()).hexdigest()[:_ID_LENGTH])


def principal_of(arn: str) -> Principal:
    """The principal an identity's ARN names (a session becomes its role); UnknownCaller otherwise."""
    match = _ARN.fullmatch(arn)
    if match is None:
        raise UnknownCaller(f"{_shown(arn)} is not an IAM user, role, federated user or root ARN")
    partition, service, account, resource = match.group("partition", "service", "account", "resource")
    if service == "iam":
        if resource == "root":
            return Principal(PrincipalKind.ROOT, partition, account, "")
        named = _IAM.fullmatch(resource)
        if named is not None:
            return Principal(PrincipalKind(named.group("kind")), partition, account, named.group("name"))
    else:
        session = _SESSION.fullmatch(resource)
        if session is not None:
            return Principal(PrincipalKind.ROLE, partition, account, session.group("name"))
        federated = _FEDERATED.fullmatch(resource)
        if federated is not None:
            return Principal(PrincipalKind.FEDERATED_USER, partition, account, federated.group("name"))
    raise UnknownCaller(f"{_shown(arn)} is not an IAM user, role, federated user or root ARN")


FEDERATED_REFUSAL = (
    "a federated user is a name, not an identity: whoever may call sts:GetFederationToken picks "
    "<name> and can sign as any earlier holder of it. Sign with a role (sts:AssumeRole; every "
    "session of a role is the role) or an IAM user"
)


def configured_principal(arn: str, *, federated_allowed: bool = False) -> str:
    """An ARN given in settings, normalised as identities are: ValueError for a session's ARN
    (settings name roles, and every session of a role is the role), and for a federated user
    unless `federated_allowed` (CALLER_TENANTS, the deployer's explicit opt-in)."""
    try:
        principal = principal_of(arn.strip())
    except UnknownCaller as exc:
        raise ValueError(exc.detail) from None
    if ":assumed-role/" in arn:
        raise ValueError(f"{_shown(arn)} is a role session: give the role, {principal.arn}")
    if principal.kind is PrincipalKind.FEDERATED_USER and not federated_allowed:
        raise ValueError(f"{_shown(arn)}: {FEDERATED_REFUSAL}")
    return principal.arn


def caller_of(user_arn: str, tenants: Mapping[str, str]) -> Caller:
    """The caller an identity's ARN signs for; `tenants` maps normalised ARNs to tenant ids.
    UnknownCaller for a federated user the tenants do not name (see the module's docstring)."""
    principal = principal_of(user_arn)
    tenant = tenants.get(principal.arn)
    if principal.kind is PrincipalKind.FEDERATED_USER and tenant is None:
        raise UnknownCaller(
            f"{_shown(principal.arn)} is refused: {FEDERATED_REFUSAL}; "
            "or ask the deployer to name this ARN in CALLER_TENANTS (see docs/api.md#callers)"
        )
    return Caller(principal, tenant)


def is_admin(caller: Caller, admin_principals: Collection[str]) -> bool:
    """Admin is a principal's right, not a tenant's: a tenant's other roles are not admins."""
    return caller.principal.arn in admin_principals


def _shown(arn: str) -> str:
    # The refusal quotes what it refused, bounded: an identity is not free text.
    return repr(arn[:200])
