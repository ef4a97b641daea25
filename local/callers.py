"""CALLBACK_URL locally: the local callers' callback URL and secret, registered at start.

Deployed, every caller has its own callback URL and secret, set through the admin routes
(`sendledger callers set`). Locally a developer usually has one receiver: with CALLBACK_URL set,
the stack registers it, and CALLBACK_SECRET (default `local-callback-secret`) as the secret, for
the unsigned local principal and every local credential's principal, through the same use case
the admin route runs. Loopback receivers (and plain http to them) are the local stack's own
allowance (CALLBACK_ALLOW_LOOPBACK, set by handler_defaults); nothing deployed sets it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from local.constants import DEFAULT_LOCAL_CREDENTIALS, ENV_LOCAL_CREDENTIALS, LOCAL_PRINCIPAL
from local.sigv4 import parse_credentials
from sendledger import names
from sendledger.domain.callers import CallerId, caller_of

DEFAULT_CALLBACK_SECRET = "local-callback-secret"  # noqa: S105 - the documented local default
LOCAL_ACTOR = "local-stack"


def callback_settings(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(CALLBACK_URL, CALLBACK_SECRET) when the developer set a URL, else None."""
    url = (environ.get(names.ENV_CALLBACK_URL) or "").strip()
    if not url:
        return None
    return url, environ.get(names.ENV_CALLBACK_SECRET) or DEFAULT_CALLBACK_SECRET


def local_callers(environ: Mapping[str, str], tenants: Mapping[str, str]) -> list[CallerId]:
    """The unsigned local principal's caller and every local credential's, once each."""
    arns = [environ.get(names.ENV_LOCAL_PRINCIPAL) or LOCAL_PRINCIPAL]
    with contextlib.suppress(ValueError):  # the gateway refuses them at start, saying why
        arns += [c.arn for c in parse_credentials(environ.get(ENV_LOCAL_CREDENTIALS) or DEFAULT_LOCAL_CREDENTIALS)]
    return list(dict.fromkeys(caller_of(arn, tenants).id for arn in arns))


def register_callbacks(environ: Mapping[str, str], url: str, secret: str) -> list[CallerId]:
    """Give every local caller `url` and `secret` (their current secret, no rotation open)."""
    from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver
    from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.domain.callbacks import SigningKeys
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings
    from sendledger.usecases.callers import CallerAdmin, Invalid, SettingsChange, change_caller

    settings = Settings.from_env(environ)
    clock = SystemClock()
    admin = CallerAdmin(
        store=DynamoCallerSettings(Table(settings.table_name), clock),
        secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock),
        resolver=SocketResolver(),
        clock=clock,
        allow_loopback=settings.callback_allow_loopback,
    )
    callers = local_callers(environ, settings.caller_tenants)
    for caller in callers:
        admin.secrets.put(caller, SigningKeys(secret))
        changed = change_caller(admin, caller, SettingsChange(callback_url=url), LOCAL_ACTOR)
        if isinstance(changed, Invalid):
            raise ValueError(f"{names.ENV_CALLBACK_URL}={url!r}: {'; '.join(changed.messages)}")
    return callers
