"""Which template version a send renders: the caller's own, else the deployment's.

A container keeps, per caller, the list of the versions it published (one Query of small
attributes, never the words) for `cache_seconds`, and the words of each caller's version it
read for as long as it lives (a version never changes; a bounded LRU). So a send of a
deployment template costs no request once the container listed its caller, a send of the
caller's own version one GetItem the first time and none after, and the reset mail's choice
comes from the same list. What may change reaches a warm container within `cache_seconds`: a
retirement, and a caller's new version shadowing the deployment's of the same id and version.
A version that is neither listed nor the deployment's is looked for directly (one GetItem,
never remembered when absent): a push is seen by the very next send, whichever container.
A resend or an escalation renders the version its first send recorded (owner and locale),
retired or not: the words of one message never change between attempts.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime, timedelta

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.errors import TemplateRetired, UnknownTemplate
from sendledger.domain.messages import Template
from sendledger.domain.template_versions import RESET_TEMPLATE_ID, TemplateOwner, TemplateVersion
from sendledger.domain.values import value
from sendledger.ports.templates import DeploymentTemplates, StoredVersion, TemplateStore, VersionSummary


@value
class Resolved:
    version: TemplateVersion
    owner: TemplateOwner


@value
class _Listing:
    """A caller's published versions, by (id, version), as read at `read_at`."""

    versions: Mapping[tuple[str, str], VersionSummary]
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
        self.reads = 0  # requests made, Query and GetItem (the bench divides them by the sends)
        self._words: OrderedDict[tuple[CallerId, str, str], StoredVersion] = OrderedDict()
        self._listings: OrderedDict[CallerId, _Listing] = OrderedDict()

    def for_send(self, caller: CallerId, template_id: str, version: str) -> Resolved:
        """The version a new send uses; UnknownTemplate or TemplateRetired when it cannot."""
        shared = self.deployment.get(template_id, version)
        listed = self._listed(caller, template_id, version, shared is not None)
        if listed is not None:
            if listed.retired_at is not None:
                raise TemplateRetired(
                    f"template {template_id!r} version {version!r} is retired: publish a new version",
                    [{"field": "template.version", "message": "retired"}],
                )
            return Resolved(self._words_of(caller, template_id, version).version, TemplateOwner.CALLER)
        if shared is None:
            raise UnknownTemplate(
                f"no template {template_id!r} version {version!r}",
                [{"field": "template", "message": "unknown id or version"}],
            )
        return Resolved(shared, TemplateOwner.DEPLOYMENT)

    def reset_version(self, caller: CallerId) -> Resolved:
        """The reset mail a caller's request uses: its own latest `password-reset` version that
        is not retired (from the caller's listing), else the deployment's latest."""
        if self.store is not None:
            live = [
                summary
                for (template_id, _), summary in self._listing(caller).versions.items()
                if template_id == RESET_TEMPLATE_ID and summary.retired_at is None
            ]
            if live:
                latest = max(live, key=lambda summary: version_order(summary.version))
                return self.for_send(caller, RESET_TEMPLATE_ID, latest.version)
        shared = [found for found in self.deployment.all() if found.id == RESET_TEMPLATE_ID]
        if not shared:
            raise UnknownTemplate(f"this deployment has no {RESET_TEMPLATE_ID} template")
        return Resolved(max(shared, key=lambda found: version_order(found.version)), TemplateOwner.DEPLOYMENT)

    def recorded(self, caller: CallerId, template: Template) -> TemplateVersion:
        """The version a message recorded (its owner's), retired or not: a resend's, a fallback's."""
        if template.owner is TemplateOwner.CALLER:
            if self.store is not None and (
                (caller, template.id, template.version) in self._words
                or self._read(caller, template.id, template.version) is not None
            ):
                return self._words_of(caller, template.id, template.version).version
        else:
            shared = self.deployment.get(template.id, template.version)
            if shared is not None:
                return shared
        raise UnknownTemplate(f"the {template.owner} template {template.id!r} v{template.version} is gone")

    def published(self, stored: StoredVersion) -> None:
        """This container's own publish or retirement: its next send sees it without a read."""
        if stored.owner is None:
            return
        self._keep_words(stored)
        listing = self._listings.get(stored.owner)
        if listing is not None:
            versions = {**listing.versions, (stored.version.id, stored.version.version): stored.summary()}
            self._listings[stored.owner] = _Listing(versions, listing.read_at)

    # --- the cache -----------------------------------------------------------------------------
    def _listed(self, caller: CallerId, template_id: str, version: str, shared: bool) -> VersionSummary | None:
        if self.store is None:
            return None
        found = self._listing(caller).versions.get((template_id, version))
        if found is None and not shared:
            # Not listed a moment ago, and nothing to fall back on: published since, perhaps.
            stored = self._read(caller, template_id, version)
            if stored is not None:
                self.published(stored)
                return stored.summary()
        return found

    def _listing(self, caller: CallerId) -> _Listing:
        assert self.store is not None
        now = self.clock.now()
        listing = self._listings.get(caller)
        # A clock that went back counts as stale, as the caller settings' cache does.
        if listing is None or not timedelta(0) <= now - listing.read_at < self.ttl:
            self.reads += 1
            summaries = self.store.versions(caller)
            listing = _Listing({(s.id, s.version): s for s in summaries}, now)
        self._listings[caller] = listing
        self._listings.move_to_end(caller)
        while len(self._listings) > self.size:
            self._listings.popitem(last=False)
        return listing

    def _words_of(self, caller: CallerId, template_id: str, version: str) -> StoredVersion:
        key = (caller, template_id, version)
        stored = self._words.get(key) or self._read(caller, template_id, version)
        if stored is None:  # listed, so published: versions are never deleted
            raise UnknownTemplate(f"template {template_id!r} v{version} is listed but could not be read")
        self._keep_words(stored)
        return stored

    def _read(self, caller: CallerId, template_id: str, version: str) -> StoredVersion | None:
        assert self.store is not None
        self.reads += 1
        stored = self.store.get(caller, template_id, version)
        if stored is not None:
            self._keep_words(stored)
        return stored

    def _keep_words(self, stored: StoredVersion) -> None:
        assert stored.owner is not None
        key = (stored.owner, stored.version.id, stored.version.version)
        self._words[key] = stored
        self._words.move_to_end(key)
        while len(self._words) > self.size:
            self._words.popitem(last=False)


def shipped_catalog() -> TemplateCatalog:
    """The shipped templates alone, no table: what tools and tests that publish nothing use."""
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.template_folder import TemplateFolder

    return TemplateCatalog(store=None, deployment=TemplateFolder(), clock=SystemClock(), cache_seconds=1, cache_size=1)


SHIPPED = shipped_catalog()
