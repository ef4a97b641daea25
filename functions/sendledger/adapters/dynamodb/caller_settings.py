"""Caller settings: one ledger item per caller (`CALLER#<caller id>` / `SETTINGS`), cached.

Written by the admin routes alone; read by the api (test mode, flag context, SMS guardrails) and
the callbacks Lambda (where a caller's events go) through the container's cache
(domain/caller_settings.py), so no send nor callback reads the item more than once per
CALLER_SETTINGS_CACHE. A write replaces the settings whole, moves `version` by one in the
same request (ADD: two admins writing at once both count) and adds its history entry (`h:<entry
key>`, write-once, as a message's) in that request too: no change without its actor and reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, Update, decode
from sendledger.adapters.dynamodb.keys import (
    CALLER_SETTINGS_SK,
    HISTORY_PREFIX,
    caller_pk,
    entry_key,
    history_attribute,
)
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.caller_settings import CallerSettings, CallerSettingsCache, SettingsChangeEntry
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, iso, parse_iso
from sendledger.domain.sms_guardrails import CountryRule, country_rule

CALLBACK_URL, TEST_MODE, FLAG_CONTEXT = "callback_url", "test_mode", "flag_context"
SMS_COUNTRIES, SMS_DAILY_SEGMENTS = "sms_countries", "sms_daily_segments"
UPDATED_AT, UPDATED_BY, VERSION = "updated_at", "updated_by", "version"
# A history entry's JSON fields (one letter each, as a message's entries).
AT, ACTOR, REASON, CHANGED = "a", "u", "r", "c"


@dataclass
class DynamoCallerSettings:
    table: Table
    clock: Clock
    cache: CallerSettingsCache = field(default_factory=CallerSettingsCache)

    def get(self, caller_id: CallerId) -> CallerSettings:
        now = self.clock.now()
        cached = self.cache.get(caller_id, now)
        if cached is not None:
            return cached
        item = self.table.get(caller_pk(caller_id), CALLER_SETTINGS_SK)
        found = settings_from(caller_id, item) if item else CallerSettings(caller_id)
        self.cache.put(found, now)
        return found

    def put(self, settings: CallerSettings, change: SettingsChangeEntry | None = None) -> CallerSettings:
        update = Update().set(TEST_MODE, settings.test_mode).set(FLAG_CONTEXT, dict(settings.flag_context))
        optional: dict[str, Any] = {
            CALLBACK_URL: settings.callback_url,
            SMS_COUNTRIES: settings.sms_countries.as_json() if settings.sms_countries else None,
            SMS_DAILY_SEGMENTS: settings.sms_daily_segments,
            UPDATED_AT: iso(settings.updated_at) if settings.updated_at else None,
            UPDATED_BY: settings.updated_by,
        }
        for name, given in optional.items():
            if given is None:
                update.remove(name)
            else:
                update.set(name, given)
        if change is not None:
            update.append_entry(history_attribute(_change_key(change, settings.version)), _entry_json(change))
        update.add(VERSION, 1)
        stored = self.table.update(caller_pk(settings.caller_id), CALLER_SETTINGS_SK, update, returning="ALL_NEW")
        written = settings_from(settings.caller_id, stored)
        self.cache.put(written, self.clock.now())
        return written


def settings_from(caller_id: CallerId, item: Item) -> CallerSettings:
    values = {name: decode(raw) for name, raw in item.items()}
    updated_at = values.get(UPDATED_AT)
    cap = values.get(SMS_DAILY_SEGMENTS)
    return CallerSettings(
        caller_id=caller_id,
        callback_url=values.get(CALLBACK_URL) or None,
        test_mode=bool(values.get(TEST_MODE, False)),
        flag_context={str(k): str(v) for k, v in (values.get(FLAG_CONTEXT) or {}).items()},
        sms_countries=_rule(values.get(SMS_COUNTRIES)),
        sms_daily_segments=int(cap) if cap is not None else None,
        updated_at=parse_iso(updated_at) if updated_at else None,
        updated_by=values.get(UPDATED_BY),
        version=int(values.get(VERSION, 0)),
        history=tuple(_entry(values[name]) for name in sorted(values) if name.startswith(HISTORY_PREFIX)),
    )


def _rule(raw: Any) -> CountryRule | None:
    if not raw:
        return None
    rule = country_rule({mode: list(codes) for mode, codes in raw.items()})
    # Written by put() from a checked rule: anything else is a corrupt item, not a rule to guess at.
    if not isinstance(rule, CountryRule):
        raise ValueError(f"stored sms_countries is not a rule: {rule}")
    return rule


def _change_key(change: SettingsChangeEntry, read_version: int) -> str:
    """Time, then the version the write was based on (two changes in one millisecond keep their
    order), then the random tail of an act's key (two admins writing at once both land)."""
    random_tail = entry_key(change.at, 0).rsplit(".", 1)[1]
    return f"{int(change.at.timestamp() * 1000):013d}.{read_version:08d}.{random_tail}"


def _entry_json(change: SettingsChangeEntry) -> str:
    body = {AT: iso(change.at), ACTOR: change.actor, REASON: change.reason, CHANGED: dict(change.changed)}
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def _entry(raw: str) -> SettingsChangeEntry:
    body = json.loads(raw)
    return SettingsChangeEntry(parse_iso(body[AT]), body[ACTOR], body.get(REASON), body.get(CHANGED) or {})
