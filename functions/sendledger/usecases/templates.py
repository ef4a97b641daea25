"""The template routes: publish, read, list, preview and retire a caller's template versions.

A caller sees its own versions and the deployment's, never another caller's (scoped by its
caller id: another caller's template is simply not found). A version is immutable: the same
body again is answered as published, another body is refused; publishing is one conditional
write, so of two publishes of one version at once exactly one writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sendledger.domain import templates
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_segments import SmsSegments
from sendledger.domain.template_rules import Problem, parse_version
from sendledger.domain.template_versions import RESET_TEMPLATE_ID, TemplateOwner
from sendledger.domain.values import value
from sendledger.ports.templates import DeploymentTemplates, StoredVersion, TemplateStore, VersionSummary
from sendledger.usecases.template_catalog import TemplateCatalog, version_order


class PublishOutcome(StrEnum):
    CREATED = "created"
    UNCHANGED = "unchanged"  # the same body was published before: nothing written
    CONFLICT = "conflict"  # another body holds this version


@value
class Published:
    outcome: PublishOutcome
    stored: StoredVersion  # the version as stored (on a conflict: the one that was there)
    notes: tuple[str, ...] = ()  # what publishing changed of the body (a reset mail's tracking)


@value
class Invalid:
    problems: tuple[Problem, ...]


@value
class Listed:
    owner: TemplateOwner
    summary: VersionSummary


@value
class Shown:
    owner: TemplateOwner
    stored: StoredVersion


@value
class Preview:
    owner: TemplateOwner
    channel: Channel
    rendered: templates.Rendered
    segments: SmsSegments | None  # SMS only: the encoding and what a carrier bills


# A lost rewrite means another publisher's won and is done, so N concurrent publishes of one
# caller's reset mail need at most N attempts each: this many publishes at once always land.
POINTER_ATTEMPTS = 8
TRACKING_FORCED = f"tracking is off: a {RESET_TEMPLATE_ID} mail's links are never rewritten by a provider"


class TemplateLibrary:
    def __init__(
        self, *, store: TemplateStore, deployment: DeploymentTemplates, catalog: TemplateCatalog, clock: Clock
    ) -> None:
        self.store = store
        self.deployment = deployment
        self.catalog = catalog
        self.clock = clock

    def publish(self, caller: CallerId, template_id: str, version: str, body: Mapping[str, Any]) -> Published | Invalid:
        parsed = parse_version(template_id, version, body)
        if parsed.version is None:
            return Invalid(parsed.problems)
        notes = (TRACKING_FORCED,) if template_id == RESET_TEMPLATE_ID and body.get("tracking", True) else ()
        stored = StoredVersion(caller, parsed.version, published_at=self.clock.now())
        existing = self.store.put_new(stored)
        if existing is None:
            self._point_reset_mail(stored)
            self.catalog.published(stored)
            return Published(PublishOutcome.CREATED, stored, notes)
        same = existing.version.sha256 == parsed.version.sha256
        if same:
            self._point_reset_mail(existing)  # a publish retried after a crash mends the pointer
        return Published(PublishOutcome.UNCHANGED if same else PublishOutcome.CONFLICT, existing, notes)

    def show(self, caller: CallerId, template_id: str, version: str) -> Shown | None:
        """The version a send would use: the caller's, else the deployment's (None: neither)."""
        own = self.store.get(caller, template_id, version)
        if own is not None:
            return Shown(TemplateOwner.CALLER, own)
        shared = self.deployment.get(template_id, version)
        if shared is None:
            return None
        return Shown(TemplateOwner.DEPLOYMENT, StoredVersion.of_deployment(shared))

    def versions(self, caller: CallerId, template_id: str | None = None) -> list[Listed]:
        """The caller's versions and the deployment's (public ones: the reset mail is listed too)."""
        own = [Listed(TemplateOwner.CALLER, summary) for summary in self.store.versions(caller, template_id)]
        shared = [
            Listed(TemplateOwner.DEPLOYMENT, StoredVersion.of_deployment(found).summary())
            for found in self.deployment.all()
            if template_id is None or found.id == template_id
        ]
        return sorted(own + shared, key=lambda listed: (listed.summary.id, listed.summary.version, listed.owner))

    def preview(
        self,
        caller: CallerId,
        template_id: str,
        version: str,
        channel: Channel,
        params: dict[str, str],
        locale: str | None,
    ) -> Preview | None:
        """Exactly what a send would render (TemplateRefused errors as a send's); nothing is
        sent or stored. Internal and retired versions preview too: that is how they are checked."""
        shown = self.show(caller, template_id, version)
        if shown is None:
            return None
        found = shown.stored.version
        templates.check(found, channel, params, internal=True)
        rendered = templates.render(found, channel, params, locale)
        return Preview(shown.owner, channel, rendered, rendered.segments() if channel is Channel.SMS else None)

    def retire(self, caller: CallerId, template_id: str, version: str) -> StoredVersion | None:
        """Retire the caller's own version (None: it has none; the deployment's retire in its folder)."""
        retired = self.store.retire(caller, template_id, version, self.clock.now())
        if retired is not None:
            self._point_reset_mail(retired)
            self.catalog.published(retired)
        return retired

    def _point_reset_mail(self, changed: StoredVersion) -> None:
        """After a `password-reset` version is published or retired: point the caller's reset
        mails at its latest version not retired, as read after this write. The rewrite is
        conditional on the pointer's revision read before the versions were; a writer that lost
        reads again, so the last one to write has seen every version written before it."""
        owner = changed.owner
        if owner is None or changed.version.id != RESET_TEMPLATE_ID:
            return
        for _ in range(POINTER_ATTEMPTS):
            revision = self.store.reset_mail(owner).revision
            live = [found for found in self.store.versions(owner, RESET_TEMPLATE_ID) if found.retired_at is None]
            latest = max(live, key=lambda found: version_order(found.version)) if live else None
            chosen = self.store.get(owner, RESET_TEMPLATE_ID, latest.version) if latest else None
            if self.store.point_reset_mail(owner, chosen, revision):
                return
        raise DependencyUnavailable("the reset mail's pointer kept changing; retry", retry_after_seconds=1)
