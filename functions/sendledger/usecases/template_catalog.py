"""Which template version a send renders: the caller's own, else the deployment's.

A version never changes once published, so a container keeps each version it read (a bounded
LRU): a send costs no request once the container has the version, and one strongly consistent
GetItem the first time. Two things may change and reach a warm container within
`cache_seconds`: a version's retirement (re-read after that long) and a caller's new version
shadowing the deployment's of the same id and version (a miss is remembered that long, only
where the deployment has the version; any other miss is a refused send and is not kept).
A resend or an escalation renders the version its first send recorded (owner and locale),
retired or not: the words of one message never change between attempts.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from datetime import datetime, timedelta

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.errors import TemplateRetired, UnknownTemplate
from sendledger.domain.messages import Template
from sendledger.domain.template_versions import RESET_TEMPLATE_ID, TemplateOwner, TemplateVersion
from sendledger.domain.values import value
from sendledger.ports.templates import DeploymentTemplates, StoredVersion, TemplateStore


@value
class Resolved:
    version: TemplateVersion
    owner: TemplateOwner


@value
class _Entry:
    stored: StoredVersion | None  # None: the caller has no such version (a remembered miss)
    read_at: datetime


@value
class _Choice:
    version: str | None  # the caller's reset version (None: it has none, the deployment's is used)
    read_at: datetime


def version_order(version: str) -> tuple[tuple[int, str], ...]:
    """ "10" after "9": numbers compare as numbers, the rest as text."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", version) if part)


class TemplateCatalog:
    def __init__(
        self,
        *,
        store: TemplateStore | None,
        deployment: DeploymentTemplates,
        clock: Clock,
        cache_seconds: int,
        cache_size: int,
    ) -> None:
        self.store = store  # None: no table (tools and tests without a ledger): the deployment's only
        self.deployment = deployment
        self.clock = clock
        self.ttl = timedelta(seconds=cache_seconds)
        self.size = cache_size
        self.reads = 0  # GetItem requests made (the bench divides them by the sends)
        self._cache: OrderedDict[tuple[CallerId, str, str], _Entry] = OrderedDict()
        self._reset_choice: dict[tuple[CallerId, str, str], _Choice] = {}

    def for_send(self, caller: CallerId, template_id: str, version: str) -> Resolved:
        """The version a new send uses; UnknownTemplate or TemplateRetired when it cannot."""
        own = self._caller_version(caller, template_id, version, fallback=self.deployment.get(template_id, version))
        if own is not None:
            if own.retired_at is not None:
                raise TemplateRetired(
                    f"template {template_id!r} version {version!r} is retired: publish a new version",
                    [{"field": "template.version", "message": "retired"}],
                )
            return Resolved(own.version, TemplateOwner.CALLER)
        shared = self.deployment.get(template_id, version)
        if shared is None:
            raise UnknownTemplate(
                f"no template {template_id!r} version {version!r}",
                [{"field": "template", "message": "unknown id or version"}],
            )
        return Resolved(shared, TemplateOwner.DEPLOYMENT)

    def reset_version(self, caller: CallerId) -> Resolved:
        """The reset mail a caller's request uses: its own latest `password-reset` version that
        is not retired, else the deployment's latest. The choice is kept `cache_seconds`."""
        key, now = (caller, RESET_TEMPLATE_ID, ""), self.clock.now()
        entry = self._reset_choice.get(key)
        if entry is None or not self._fresh(entry, now):
            choice = None
            if self.store is not None:
                self.reads += 1
                live = [s for s in self.store.versions(caller, RESET_TEMPLATE_ID) if s.retired_at is None]
                choice = max(live, key=lambda summary: version_order(summary.version)) if live else None
            entry = _Choice(choice.version if choice else None, now)
            self._reset_choice[key] = entry
        if entry.version is not None:
            return self.for_send(caller, RESET_TEMPLATE_ID, entry.version)
        shared = [found for found in self.deployment.all() if found.id == RESET_TEMPLATE_ID]
        if not shared:
            raise UnknownTemplate(f"this deployment has no {RESET_TEMPLATE_ID} template")
        return Resolved(max(shared, key=lambda found: version_order(found.version)), TemplateOwner.DEPLOYMENT)

    def recorded(self, caller: CallerId, template: Template) -> TemplateVersion:
        """The version a message recorded (its owner's), retired or not: a resend's, a fallback's."""
        if template.owner is TemplateOwner.CALLER:
            own = self._caller_version(caller, template.id, template.version, fallback=None, retirement=False)
            if own is not None:
                return own.version
        else:
            shared = self.deployment.get(template.id, template.version)
            if shared is not None:
                return shared
        raise UnknownTemplate(f"the {template.owner} template {template.id!r} v{template.version} is gone")

    def _caller_version(
        self,
        caller: CallerId,
        template_id: str,
        version: str,
        *,
        fallback: TemplateVersion | None,
        retirement: bool = True,
    ) -> StoredVersion | None:
        """The caller's version, from the cache when it answers what is asked: the words never
        change; its retirement (`retirement`) and a remembered miss are good for the TTL."""
        if self.store is None:
            return None
        key, now = (caller, template_id, version), self.clock.now()
        entry = self._cache.get(key)
        if entry is not None and (self._fresh(entry, now) or _settled(entry, retirement)):
            self._cache.move_to_end(key)
            return entry.stored
        self.reads += 1
        stored = self.store.get(caller, template_id, version)
        if stored is not None or fallback is not None:
            self.remember(key, _Entry(stored, now))
        return stored

    def _fresh(self, entry: _Entry | _Choice, now: datetime) -> bool:
        # A clock that went back counts as stale, as the caller settings' cache does.
        return timedelta(0) <= now - entry.read_at < self.ttl

    def remember(self, key: tuple[CallerId, str, str], entry: _Entry) -> None:
        self._cache[key] = entry
        self._cache.move_to_end(key)
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)

    def published(self, stored: StoredVersion) -> None:
        """This container's own publish or retirement: its next send sees it without a read."""
        if stored.version.id == RESET_TEMPLATE_ID and stored.owner is not None:
            self._reset_choice.pop((stored.owner, RESET_TEMPLATE_ID, ""), None)
        if stored.owner is not None:
            self.remember((stored.owner, stored.version.id, stored.version.version), _Entry(stored, self.clock.now()))


def _settled(entry: _Entry, retirement: bool) -> bool:
    """A cached version whose words are all that is asked, or that is retired (for good)."""
    return entry.stored is not None and (not retirement or entry.stored.retired_at is not None)


def shipped_catalog() -> TemplateCatalog:
    """The shipped templates alone, no table: what tools and tests that publish nothing use."""
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.template_folder import TemplateFolder

    return TemplateCatalog(store=None, deployment=TemplateFolder(), clock=SystemClock(), cache_seconds=1, cache_size=1)


SHIPPED = shipped_catalog()
