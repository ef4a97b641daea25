"""Caller settings: one ledger item per caller (`CALLER#<caller id>` / `SETTINGS`), cached.

Written by the admin routes alone; read by the api (test mode, flag context) and the
callbacks Lambda (where a caller's events go) through the container's cache
(domain/caller_settings.py), so no send nor callback reads the item more than once per
CALLER_SETTINGS_CACHE. A write replaces the settings whole and moves `version` by one in the
same request (ADD: two admins writing at once both count).

The admin routes' write goes through the settings' model (modelled.py); the read stays
low-level: the api's send path and the callbacks Lambda read the item on their cold start, where
PynamoDB's import would cost more than the read itself (benchmarks/README.md, PynamoDB).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sendledger.adapters.dynamodb.expressions import Item, decode
from sendledger.adapters.dynamodb.keys import CALLER_SETTINGS_SK, caller_pk
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.caller_settings import CallerSettings, CallerSettingsCache
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, iso, parse_iso

CALLBACK_URL, TEST_MODE, FLAG_CONTEXT = "callback_url", "test_mode", "flag_context"
UPDATED_AT, UPDATED_BY, VERSION = "updated_at", "updated_by", "version"


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

    def put(self, settings: CallerSettings) -> CallerSettings:
        from pynamodb.expressions.update import Action

        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import CallerSettingsItem as Stored

        actions: list[Action] = [Stored.test_mode.set(settings.test_mode)]
        actions.append(Stored.flag_context.set(dict(settings.flag_context)))
        optional = [
            (Stored.callback_url, settings.callback_url),
            (Stored.updated_at, iso(settings.updated_at) if settings.updated_at else None),
            (Stored.updated_by, settings.updated_by),
        ]
        actions += [attribute.remove() if text is None else attribute.set(text) for attribute, text in optional]
        actions.append(Stored.version.add(1))
        pk = caller_pk(settings.caller_id)
        stored = modelled.update(self.table, pk, CALLER_SETTINGS_SK, actions, returning="UPDATED_NEW")
        written = replace(settings, version=int(decode(stored[Stored.version.attr_name])))
        self.cache.put(written, self.clock.now())
        return written


def settings_from(caller_id: CallerId, item: Item) -> CallerSettings:
    values = {name: decode(raw) for name, raw in item.items()}
    updated_at = values.get(UPDATED_AT)
    return CallerSettings(
        caller_id=caller_id,
        callback_url=values.get(CALLBACK_URL) or None,
        test_mode=bool(values.get(TEST_MODE, False)),
        flag_context={str(k): str(v) for k, v in (values.get(FLAG_CONTEXT) or {}).items()},
        updated_at=parse_iso(updated_at) if updated_at else None,
        updated_by=values.get(UPDATED_BY),
        version=int(values.get(VERSION, 0)),
    )
