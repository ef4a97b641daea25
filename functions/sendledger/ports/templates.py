"""Each caller's published template versions (ledger items), by caller id, id and version."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Protocol

from sendledger.domain.callers import CallerId
from sendledger.domain.recipients import Channel
from sendledger.domain.template_versions import TemplateVersion
from sendledger.domain.values import value


@value
class VersionSummary:
    """What a listing shows of a version: never its words (a list stays small)."""

    id: str
    version: str
    sha256: str
    channels: tuple[Channel, ...]
    locales: tuple[str, ...]
    published_at: datetime | None  # None: the deployment's (its folder has no dates)
    retired_at: datetime | None = None


@value
class StoredVersion:
    """A published version: its words (immutable) and when it was published and retired."""

    owner: CallerId | None  # None: the deployment's
    version: TemplateVersion
    published_at: datetime | None = None
    retired_at: datetime | None = None

    @classmethod
    def of_deployment(cls, version: TemplateVersion) -> StoredVersion:
        return cls(None, version)

    def summary(self) -> VersionSummary:
        found = self.version
        return VersionSummary(
            id=found.id,
            version=found.version,
            sha256=found.sha256,
            channels=tuple(sorted(found.channels())),
            locales=tuple(sorted(found.locales)),
            published_at=self.published_at,
            retired_at=self.retired_at,
        )


@value
class ResetMailPointer:
    """Which of a caller's `password-reset` versions its reset mails use (its latest not
    retired), with that version's words: a reset request reads this one item. `revision`
    counts its writes (each rewrite is conditional on the revision it read)."""

    stored: StoredVersion | None  # None: the caller has none live (the deployment's mail is used)
    revision: int = 0


class TemplateStore(Protocol):
    def get(self, owner: CallerId, template_id: str, version: str) -> StoredVersion | None:
        """The version as stored (strongly consistent: a push is seen by the next send)."""
        ...

    def put_new(self, stored: StoredVersion) -> StoredVersion | None:
        """Write the version unless one with its id and version exists (one conditional write):
        None when this call wrote it, else the version that was there first."""
        ...

    def versions(self, owner: CallerId, template_id: str | None = None) -> list[VersionSummary]:
        """The owner's versions (of one id, or all), by id then version."""
        ...

    def retire(self, owner: CallerId, template_id: str, version: str, at: datetime) -> StoredVersion | None:
        """Mark the version retired (kept if it already was); None when there is no such version."""
        ...

    def reset_mail(self, owner: CallerId) -> ResetMailPointer:
        """The owner's reset-mail pointer as stored (one strongly consistent read)."""
        ...

    def point_reset_mail(self, owner: CallerId, stored: StoredVersion | None, revision: int) -> bool:
        """Point the owner's reset mails at `stored` unless the pointer was rewritten since
        `revision` was read (then False, nothing written)."""
        ...


class DeploymentTemplates(Protocol):
    """The deployment's versions (CDK context templates_dir, bundled with the code)."""

    def get(self, template_id: str, version: str) -> TemplateVersion | None: ...

    def all(self) -> list[TemplateVersion]: ...


class TemplatesInMemory:
    """No table: versions held by this object alone (tools and tests without a ledger). It keeps
    the store's contract: put_new writes once, retire keeps the first retirement."""

    def __init__(self) -> None:
        self._items: dict[tuple[CallerId, str, str], StoredVersion] = {}
        self._reset_mails: dict[CallerId, ResetMailPointer] = {}
        self.gets = self.lists = 0  # requests a table would have answered

    def get(self, owner: CallerId, template_id: str, version: str) -> StoredVersion | None:
        self.gets += 1
        return self._items.get((owner, template_id, version))

    def put_new(self, stored: StoredVersion) -> StoredVersion | None:
        assert stored.owner is not None
        key = (stored.owner, stored.version.id, stored.version.version)
        existing = self._items.get(key)
        if existing is None:
            self._items[key] = stored
        return existing

    def versions(self, owner: CallerId, template_id: str | None = None) -> list[VersionSummary]:
        self.lists += 1
        return [
            stored.summary()
            for (who, found_id, _), stored in sorted(self._items.items())
            if who == owner and template_id in (None, found_id)
        ]

    def retire(self, owner: CallerId, template_id: str, version: str, at: datetime) -> StoredVersion | None:
        key = (owner, template_id, version)
        stored = self._items.get(key)
        if stored is None:
            return None
        if stored.retired_at is None:
            stored = self._items[key] = replace(stored, retired_at=at)
        return stored

    def reset_mail(self, owner: CallerId) -> ResetMailPointer:
        self.gets += 1
        return self._reset_mails.get(owner, ResetMailPointer(None))

    def point_reset_mail(self, owner: CallerId, stored: StoredVersion | None, revision: int) -> bool:
        if self._reset_mails.get(owner, ResetMailPointer(None)).revision != revision:
            return False
        self._reset_mails[owner] = ResetMailPointer(stored, revision + 1)
        return True
