"""Caller settings as admins manage them: a caller's callback URL, test mode, flag context and
SMS guardrails, and its callback secret's rotation. Every change is recorded in the settings'
history with its actor and the admin's reason.

A callback URL is checked when it is set: https, no userinfo, and a host whose every address
is public (resolved now; the callbacks Lambda resolves and checks again before each POST). A
caller that gets its first callback URL gets its secret in the same act, shown once.

Rotation: a new secret becomes current and the old one stays valid beside it (each callback
carries both signatures) until an admin ends the rotation, which is refused until every
callbacks container has the new secret (SECRET_CACHE after the rotation).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sendledger.domain.callbacks import SECRET_CACHE, SigningKeys, new_secret
from sendledger.domain.caller_settings import CallerSettings, Refused, SettingsChangeEntry, flag_context_problems
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.sms_guardrails import CountryRule, country_rule, utc_day
from sendledger.domain.values import value
from sendledger.ports.callers import CallbackSecrets, CallerSettingsStore
from sendledger.ports.sms_usage import SmsUsage
from sendledger.ports.status_out import HostResolver
from sendledger.usecases.callbacks import vetted_target

LOG = logging.getLogger("sendledger.callers")


class Keep(Enum):
    KEEP = "keep"  # a setting the change leaves as it is


KEEP = Keep.KEEP


@value
class SettingsChange:
    callback_url: str | Keep | None = KEEP  # None: no callbacks any more
    test_mode: bool | Keep = KEEP
    flag_context: Mapping[str, str] | Keep = field(default=KEEP, hash=False)
    # `{"allow": [...]}` or `{"block": [...]}` as given (checked here); None: no rule of its own.
    sms_countries: Mapping[str, Any] | Keep | None = field(default=KEEP, hash=False)
    sms_daily_segments: int | Keep | None = KEEP  # None: no cap
    reason: str | None = None  # why the admin changed it (the history's)


@value
class SecretStatus:
    configured: bool
    rotating: bool = False
    rotated_at: datetime | None = None  # when the current secret replaced the previous one


@value
class CallerView:
    settings: CallerSettings
    secret: SecretStatus
    sms_segments_today: int = 0  # counted from the stream (a few seconds behind)
    sms_default_countries: CountryRule | None = None  # the deployment's, for a caller without its own
    new_secret: str | None = field(default=None, repr=False)  # shown once, in the answer that made it


@value
class Invalid:
    field: str
    messages: tuple[str, ...]


@value
class RotationTooRecent:
    retry_after_seconds: int


@value
class NoSecret:
    caller_id: CallerId


@dataclass
class CallerAdmin:
    store: CallerSettingsStore
    secrets: CallbackSecrets  # read fresh: a rotation starts from what is stored
    resolver: HostResolver
    clock: Clock
    sms_usage: SmsUsage  # today's counted segments, shown beside the cap
    sms_default_countries: CountryRule | None  # Settings.sms_default_countries
    allow_loopback: bool = False  # the local stack's receiver (never deployed)
    rotation_grace: timedelta = SECRET_CACHE


def show_caller(admin: CallerAdmin, caller_id: CallerId) -> CallerView:
    return _view(admin, admin.store.get(caller_id), admin.secrets.keys(caller_id))


def change_caller(admin: CallerAdmin, caller_id: CallerId, change: SettingsChange, actor: str) -> CallerView | Invalid:
    current = admin.store.get(caller_id)
    url = current.callback_url if isinstance(change.callback_url, Keep) else change.callback_url
    if url is not None and url != current.callback_url:
        refused = check_callback_url(admin, url)
        if refused is not None:
            return Invalid("callback_url", (f"{refused.reason.value}: {refused.detail}",))
    context = current.flag_context if isinstance(change.flag_context, Keep) else dict(change.flag_context)
    problems = flag_context_problems(context)
    if problems:
        return Invalid("flag_context", tuple(problems))
    countries = _countries(current, change)
    if isinstance(countries, Invalid):
        return countries
    keys = admin.secrets.keys(caller_id)
    made = None
    if url is not None and keys is None:
        made = new_secret()  # before the URL is stored: a stored URL always has its secret
        keys = SigningKeys(made)
        admin.secrets.put(caller_id, keys)
    now = admin.clock.now()
    wanted = replace(
        current,
        callback_url=url,
        test_mode=current.test_mode if isinstance(change.test_mode, Keep) else change.test_mode,
        flag_context=context,
        sms_countries=countries,
        sms_daily_segments=_kept(change.sms_daily_segments, current.sms_daily_segments),
        updated_at=now,
        updated_by=actor,
    )
    changed = _changed_fields(current, wanted)
    stored = admin.store.put(wanted, SettingsChangeEntry(now, actor, change.reason, changed))
    LOG.info(
        "caller settings changed",
        extra={"caller_id": caller_id, "actor": actor, "version": stored.version, "changed": sorted(changed)},
    )
    return _view(admin, stored, keys, made)


def rotate_secret(admin: CallerAdmin, caller_id: CallerId, actor: str) -> CallerView:
    """A new current secret; the current one stays valid as the previous (a rotation already
    open drops its previous: two secrets at most)."""
    old = admin.secrets.keys(caller_id)
    made = new_secret()
    keys = SigningKeys(made, old.current, admin.clock.now()) if old else SigningKeys(made)
    admin.secrets.put(caller_id, keys)
    LOG.info("callback secret rotated", extra={"caller_id": caller_id, "actor": actor, "rotating": keys.rotating})
    return _view(admin, admin.store.get(caller_id), keys, made)


def end_rotation(admin: CallerAdmin, caller_id: CallerId, actor: str) -> CallerView | RotationTooRecent | NoSecret:
    keys = admin.secrets.keys(caller_id)
    if keys is None:
        return NoSecret(caller_id)
    if keys.rotating:
        since = admin.clock.now() - keys.rotated_at if keys.rotated_at else admin.rotation_grace
        if since < admin.rotation_grace:
            return RotationTooRecent(max(1, int((admin.rotation_grace - since).total_seconds() + 0.999)))
        keys = SigningKeys(keys.current)
        admin.secrets.put(caller_id, keys)
        LOG.info("callback secret rotation ended", extra={"caller_id": caller_id, "actor": actor})
    return _view(admin, admin.store.get(caller_id), keys)


def check_callback_url(admin: CallerAdmin, url: str) -> Refused | None:
    """Why `url` cannot be a callback URL now (None: it can)."""
    target = vetted_target(url, admin.resolver, allow_loopback=admin.allow_loopback)
    return target if isinstance(target, Refused) else None


def _kept(given: int | Keep | None, current: int | None) -> int | None:
    return current if isinstance(given, Keep) else given


def _countries(current: CallerSettings, change: SettingsChange) -> CountryRule | Invalid | None:
    if isinstance(change.sms_countries, Keep):
        return current.sms_countries
    if change.sms_countries is None:
        return None
    rule = country_rule(dict(change.sms_countries))
    return rule if isinstance(rule, CountryRule) else Invalid("sms_countries", tuple(rule))


def _changed_fields(before: CallerSettings, after: CallerSettings) -> dict[str, object]:
    """The history's record of a write: each field it changed, with its new value (JSON)."""
    shown: dict[str, tuple[object, object]] = {
        "callback_url": (before.callback_url, after.callback_url),
        "test_mode": (before.test_mode, after.test_mode),
        "flag_context": (dict(before.flag_context), dict(after.flag_context)),
        "sms_countries": (
            before.sms_countries.as_json() if before.sms_countries else None,
            after.sms_countries.as_json() if after.sms_countries else None,
        ),
        "sms_daily_segments": (before.sms_daily_segments, after.sms_daily_segments),
    }
    return {name: new for name, (old, new) in shown.items() if old != new}


def _view(
    admin: CallerAdmin, settings: CallerSettings, keys: SigningKeys | None, made: str | None = None
) -> CallerView:
    today = admin.sms_usage.segments_on(settings.caller_id, utc_day(admin.clock.now()))
    return CallerView(settings, _status(keys), today, admin.sms_default_countries, made)


def _status(keys: SigningKeys | None) -> SecretStatus:
    if keys is None:
        return SecretStatus(configured=False)
    return SecretStatus(configured=True, rotating=keys.rotating, rotated_at=keys.rotated_at)
