"""Who a request to the local gateway is, as API Gateway's IAM authorization would decide it.

A signed request is verified (SigV4) and acts as its credential's IAM user; ``/v1/admin/*``
takes only the admin credential. An unsigned one acts as the fixed local principal in the
default ``open`` mode and is refused in ``sigv4`` mode, as deployed. The local routes (the
outbox, which shows reset links; the bus's events; the console) are the operator's: in
``sigv4`` mode they take the admin credential too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from local.constants import (
    ACCOUNT_ID,
    ADMIN_CREDENTIAL,
    DEFAULT_LOCAL_CREDENTIALS,
    ENV_LOCAL_AUTH,
    ENV_LOCAL_CREDENTIALS,
    LOCAL_PRINCIPAL,
    REGION,
)
from local.sigv4 import LocalCredential, SignatureRejected, SigV4Verifier, parse_credentials

ADMIN_PREFIX = "/v1/admin/"
# Routes a provider signs itself (webhooks): API Gateway does not ask them for SigV4.
UNSIGNED_PREFIXES = ("/v1/providers/",)
UNSIGNED_ACCESS_KEY = "AKIALOCALDEVELOPER00"  # what an unsigned request's identity names
LOCAL_ROUTES_REFUSAL = (
    f"in {ENV_LOCAL_AUTH}=sigv4 mode the local routes (/local/outbox, /local/events, the console) take "
    "the admin credential: sign with it (the banner prints it; e.g. curl --aws-sigv4 "
    f"'aws:amz:{REGION}:execute-api' --user <key>:<secret>), or restart with {ENV_LOCAL_AUTH}=open "
    "to open the console in a browser"
)


class AuthMode(StrEnum):
    OPEN = "open"
    SIGV4 = "sigv4"


@dataclass(frozen=True)
class Caller:
    """The identity handed to the api Lambda (``requestContext.identity``)."""

    name: str  # the credential's name; "local" for the fixed principal (the access line shows it)
    arn: str
    access_key: str
    user_id: str

    @classmethod
    def of(cls, credential: LocalCredential) -> Caller:
        return cls(credential.name, credential.arn, credential.access_key, credential.user_id)


@dataclass(frozen=True)
class Refused:
    detail: str


class LocalAuth:
    def __init__(self, verifier: SigV4Verifier, mode: AuthMode, unsigned: Caller) -> None:
        self.verifier = verifier
        self.mode = mode
        self.unsigned = unsigned

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] = os.environ,
        *,
        principal: str = LOCAL_PRINCIPAL,
        account_id: str = ACCOUNT_ID,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> LocalAuth:
        """The mode and credentials from the environment; a bad value stops the stack at start."""
        raw_mode = (environ.get(ENV_LOCAL_AUTH) or AuthMode.OPEN.value).strip().lower()
        try:
            mode = AuthMode(raw_mode)
        except ValueError:
            raise ValueError(f"{ENV_LOCAL_AUTH} must be 'open' or 'sigv4', not {raw_mode!r}") from None
        try:
            credentials = parse_credentials(environ.get(ENV_LOCAL_CREDENTIALS) or DEFAULT_LOCAL_CREDENTIALS, account_id)
        except ValueError as error:
            raise ValueError(f"{ENV_LOCAL_CREDENTIALS}: {error}") from None
        region = environ.get("AWS_DEFAULT_REGION") or environ.get("AWS_REGION") or REGION
        verifier = SigV4Verifier(credentials, region=region, clock=clock)
        return cls(verifier, mode, Caller("local", principal, UNSIGNED_ACCESS_KEY, principal))

    @property
    def credentials(self) -> tuple[LocalCredential, ...]:
        return tuple(self.verifier.by_access_key.values())

    def authenticate(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> Caller | Refused:
        path = target.partition("?")[0]
        if path.startswith(UNSIGNED_PREFIXES):
            return self.unsigned
        if not any(name.lower() == "authorization" for name, _ in headers):
            if self.mode is AuthMode.SIGV4:
                return Refused(f"sign the request with SigV4 ({ENV_LOCAL_AUTH}=sigv4 refuses unsigned requests)")
            return self.unsigned
        try:
            credential = self.verifier.verify(method, target, headers, body)
        except SignatureRejected as rejected:
            return Refused(rejected.detail)
        if path.startswith(ADMIN_PREFIX) and credential.name != ADMIN_CREDENTIAL:
            return Refused(f"{credential.arn} may not call {ADMIN_PREFIX}*: sign with the admin credential")
        return Caller.of(credential)

    def local_route_caller(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Caller | Refused:
        """Who may read the local routes: anyone in ``open`` mode; the admin credential alone in
        ``sigv4`` mode (a browser cannot sign: the refusal says how to open the console)."""
        if self.mode is AuthMode.OPEN:
            return self.unsigned
        if not any(name.lower() == "authorization" for name, _ in headers):
            return Refused(LOCAL_ROUTES_REFUSAL)
        try:
            credential = self.verifier.verify(method, target, headers, body)
        except SignatureRejected as rejected:
            return Refused(rejected.detail)
        if credential.name != ADMIN_CREDENTIAL:
            return Refused(f"{credential.arn} may not read the local routes: {LOCAL_ROUTES_REFUSAL}")
        return Caller.of(credential)


def banner_lines(auth: LocalAuth, api_url: str) -> list[str]:
    """What the local stack prints about the console and the credentials it accepts."""
    unsigned = "accepted as " + auth.unsigned.arn if auth.mode is AuthMode.OPEN else "refused"
    console = "" if auth.mode is AuthMode.OPEN else f"  (admin credential only: {ENV_LOCAL_AUTH}=open to browse it)"
    lines = [
        f"  Console:       {api_url}/local/console{console}",
        f"  Auth:          {ENV_LOCAL_AUTH}={auth.mode.value} (SigV4, service execute-api, region "
        f"{auth.verifier.region}; unsigned requests {unsigned})",
    ]
    for credential in auth.credentials:
        admin = "  (the /v1/admin/* credential)" if credential.name == ADMIN_CREDENTIAL else ""
        lines.append(
            f"    {credential.name:<6} AWS_ACCESS_KEY_ID={credential.access_key} "
            f"AWS_SECRET_ACCESS_KEY={credential.secret_key}  {credential.arn}{admin}"
        )
    return lines
