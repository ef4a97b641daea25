"""Caller settings: one ledger item per caller (`CALLER#<caller id>` / `SETTINGS`), cached.

Written by the admin routes alone; read by the api (test mode, flag context, SMS guardrails) and
the callbacks Lambda (where a caller's events go) through the container's cache
(domain/caller_settings.py), so no send nor callback reads the item more than once per
CALLER_SETTINGS_CACHE. A write replaces the settings whole, moves `version` by one in the
same request (ADD: two admins writing at once both count) and appends its history entry (actor,
reason, the fields changed) in that request too: no change without who made it and why.

The admin routes' write goes through the settings' model (modelled.py); the read stays
low-level: the api's send path and the callbacks Lambda read the item on their cold start, where
PynamoDB's import would cost more than the read itself (benchmarks/README.md, PynamoDB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, decode
from sendledger.adapters.dynamodb.keys import CALLER_SETTINGS_SK, caller_pk
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.caller_settings import CallerSettings, CallerSettingsCache, SettingsChangeEntry
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, iso, parse_iso
from sendledger.domain.sms_guardrails import CountryRule, country_rule

CALLBACK_URL, TEST_MODE, FLAG_CONTEXT = "callback_url", "test_mode", "flag_context"
SMS_COUNTRIES, SMS_DAILY_SEGMENTS, HISTORY = "sms_countries", "sms_daily_segments", "history"
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
        from pynamodb.expressions.update import Action

        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import CallerSettingsItem as Stored

        actions: list[Action] = [Stored.test_mode.set(settings.test_mode)]
        actions.append(Stored.flag_context.set(dict(settings.flag_context)))
        optional: list[tuple[Any, Any]] = [
            (Stored.callback_url, settings.callback_url),
            (Stored.sms_countries, settings.sms_countries.as_json() if settings.sms_countries else None),
            (Stored.sms_daily_segments, settings.sms_daily_segments),
            (Stored.updated_at, iso(settings.updated_at) if settings.updated_at else None),
            (Stored.updated_by, settings.updated_by),
        ]
        actions += [attribute.remove() if given is None else attribute.set(given) for attribute, given in optional]
        if change is not None:  # appended: no write can drop or reorder another's entry
            actions.append(Stored.history.set((Stored.history | []).append([_entry_json(change)])))
        actions.append(Stored.version.add(1))
        pk = caller_pk(settings.caller_id)
        stored = modelled.update(self.table, pk, CALLER_SETTINGS_SK, actions, returning="ALL_NEW")
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
        history=tuple(_entry(raw) for raw in values.get(HISTORY) or ()),
    )


def _rule(raw: Any) -> CountryRule | None:
    if not raw:
        return None
    rule = country_rule({mode: list(codes) for mode, codes in raw.items()})
    # Written by put() from a checked rule: anything else is a corrupt item, not a rule to guess at.
    if not isinstance(rule, CountryRule):
        raise ValueError(f"stored sms_countries is not a rule: {rule}")
    return rule


def _entry_json(change: SettingsChangeEntry) -> str:
    body = {AT: iso(change.at), ACTOR: change.actor, REASON: change.reason, CHANGED: dict(change.changed)}
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def _entry(raw: str) -> SettingsChangeEntry:
    body = json.loads(raw)
    return SettingsChangeEntry(parse_iso(body[AT]), body[ACTOR], body.get(REASON), body.get(CHANGED) or {})
