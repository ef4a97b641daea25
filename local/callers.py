"""CALLBACK_URL and SENDLEDGER_LOCAL_CALLER_SETTINGS locally: the local callers' callback URL and
secret, and their other settings (SMS guardrails, test mode, flag context), registered at start.

Deployed, every caller has its own callback URL and secret, set through the admin routes
(`sendledger callers set`). Locally a developer usually has one receiver: with CALLBACK_URL set,
the stack registers it, and CALLBACK_SECRET (default `local-callback-secret`) as the secret, for
the unsigned local principal and every local credential's principal, through the same use case
the admin route runs. Loopback receivers (and plain http to them) are the local stack's own
allowance (CALLBACK_ALLOW_LOOPBACK, set by handler_defaults); nothing deployed sets it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from local.constants import DEFAULT_LOCAL_CREDENTIALS, ENV_LOCAL_CREDENTIALS, LOCAL_PRINCIPAL
from local.sigv4 import parse_credentials
from sendledger import names
from sendledger.domain.callers import CallerId, caller_of

if TYPE_CHECKING:
    from sendledger.usecases.callers import CallerAdmin

DEFAULT_CALLBACK_SECRET = "local-callback-secret"  # noqa: S105 - the documented local default
LOCAL_ACTOR = "local-stack"
ENV_LOCAL_CALLER_SETTINGS = "SENDLEDGER_LOCAL_CALLER_SETTINGS"
# What SENDLEDGER_LOCAL_CALLER_SETTINGS may set (the callback URL has CALLBACK_URL).
LOCAL_SETTINGS = frozenset({"test_mode", "flag_context", "sms_countries", "sms_daily_segments"})


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
    from sendledger.domain.callbacks import SigningKeys
    from sendledger.usecases.callers import Invalid, SettingsChange, change_caller

    admin, tenants = _local_admin(environ)
    callers = local_callers(environ, tenants)
    for caller in callers:
        admin.secrets.put(caller, SigningKeys(secret))
        changed = change_caller(admin, caller, SettingsChange(callback_url=url), LOCAL_ACTOR)
        if isinstance(changed, Invalid):
            raise ValueError(f"{names.ENV_CALLBACK_URL}={url!r}: {'; '.join(changed.messages)}")
    return callers


def apply_caller_settings(environ: Mapping[str, str], raw: str) -> list[CallerId]:
    """SENDLEDGER_LOCAL_CALLER_SETTINGS: the same settings for every local caller, as a JSON
    object of the admin route's body (`{"sms_countries": {"allow": ["GB"]}, "sms_daily_segments":
    20}`), through the use case the route runs; its history names the local stack as the actor."""
    from sendledger.usecases.callers import KEEP, Invalid, SettingsChange, change_caller

    try:
        given = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{ENV_LOCAL_CALLER_SETTINGS}: not JSON ({exc})") from None
    unknown = set(given) - LOCAL_SETTINGS if isinstance(given, dict) else {"(not an object)"}
    if unknown:
        raise ValueError(
            f"{ENV_LOCAL_CALLER_SETTINGS}: {sorted(unknown)} (settings: {', '.join(sorted(LOCAL_SETTINGS))})"
        )
    change = SettingsChange(
        test_mode=given.get("test_mode", KEEP),
        flag_context=given.get("flag_context", KEEP),
        sms_countries=given.get("sms_countries", KEEP),
        sms_daily_segments=given.get("sms_daily_segments", KEEP),
        reason=f"set by {ENV_LOCAL_CALLER_SETTINGS} at start",
    )
    admin, tenants = _local_admin(environ)
    callers = local_callers(environ, tenants)
    for caller in callers:
        changed = change_caller(admin, caller, change, LOCAL_ACTOR)
        if isinstance(changed, Invalid):
            raise ValueError(f"{ENV_LOCAL_CALLER_SETTINGS}: {changed.field}: {'; '.join(changed.messages)}")
    return callers


def _local_admin(environ: Mapping[str, str]) -> tuple[CallerAdmin, Mapping[str, str]]:
    from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings
    from sendledger.usecases.callers import CallerAdmin

    settings = Settings.from_env(environ)
    clock = SystemClock()
    ledger = LedgerTable.named(settings.table_name, clock)
    admin = CallerAdmin(
        store=ledger.caller_settings,
        secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock),
        resolver=SocketResolver(),
        clock=clock,
        sms_usage=ledger.sms_usage,
        sms_default_countries=settings.sms_default_countries,
        allow_loopback=settings.callback_allow_loopback,
    )
    return admin, settings.caller_tenants
