"""Which template version a send renders: the caller's own, else the deployment's.

A container keeps what it read per caller, id and version (a bounded LRU), so a send reads the
ledger at most once per version it needs: one GetItem the first time, none after. A version
never changes, so its words are kept for as long as the container lives; what may change is
whether it is retired, and whether a caller has published its own version of an id and version
the deployment also has. Those answers are read again after `cache_seconds`: a retirement, and
a caller's version shadowing the deployment's, reach a warm container within that time. A
version that is neither the caller's nor the deployment's is not remembered (a 422 that reads
once per request), so a push is seen by the very next send, whichever container.

The reset mail is the caller's latest `password-reset` version not retired, which the ledger
keeps as one pointer item (ports/templates.py ResetMailPointer): one GetItem the first time a
container resets for a caller, again after `cache_seconds`.

A resend or an escalation renders the version its first send recorded (owner and locale),
retired or not: the words of one message never change between attempts.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.errors import TemplateRetired, UnknownTemplate
from sendledger.domain.messages import Template
from sendledger.domain.template_versions import RESET_TEMPLATE_ID, TemplateOwner, TemplateVersion
from sendledger.domain.values import value
from sendledger.ports.templates import DeploymentTemplates, StoredVersion, TemplateStore

K = TypeVar("K")


@value
class Resolved:
    version: TemplateVersion
    owner: TemplateOwner


@value
class _Answer:
    """What the ledger answered for a key (None: no such item), and when."""

    stored: StoredVersion | None
    read_at: datetime


class _Answers(Generic[K]):
    """A bounded LRU of answers, each fresh for `ttl` after it was read."""

    def __init__(self, size: int, ttl: timedelta) -> None:
        self.size, self.ttl = size, ttl
        self._held: OrderedDict[K, _Answer] = OrderedDict()

    def get(self, key: K) -> _Answer | None:
        answer = self._held.get(key)
        if answer is not None:
            self._held.move_to_end(key)
        return answer

    def fresh(self, key: K, now: datetime) -> _Answer | None:
        answer = self.get(key)
        # A clock that went back counts as stale, as the caller settings' cache does.
        if answer is None or not timedelta(0) <= now - answer.read_at < self.ttl:
            return None
        return answer

    def keep(self, key: K, answer: _Answer) -> None:
        self._held[key] = answer
        self._held.move_to_end(key)
        while len(self._held) > self.size:
            self._held.popitem(last=False)

    def drop(self, key: K) -> None:
        self._held.pop(key, None)


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
        ttl = timedelta(seconds=cache_seconds)
        self.reads = 0  # GetItem requests made (the bench divides them by the sends)
        self._versions: _Answers[tuple[CallerId, str, str]] = _Answers(cache_size, ttl)
        self._reset_mails: _Answers[CallerId] = _Answers(cache_size, ttl)

    def for_send(self, caller: CallerId, template_id: str, version: str) -> Resolved:
        """The version a new send uses; UnknownTemplate or TemplateRetired when it cannot."""
        shared = self.deployment.get(template_id, version)
        own = self._own(caller, template_id, version, remember_absence=shared is not None)
        if own is not None:
            if own.retired_at is not None:
                raise TemplateRetired(
                    f"template {template_id!r} version {version!r} is retired: publish a new version",
                    [{"field": "template.version", "message": "retired"}],
                )
            return Resolved(own.version, TemplateOwner.CALLER)
        if shared is None:
            raise UnknownTemplate(
                f"no template {template_id!r} version {version!r}",
                [{"field": "template", "message": "unknown id or version"}],
            )
        return Resolved(shared, TemplateOwner.DEPLOYMENT)

    def reset_version(self, caller: CallerId) -> Resolved:
        """The reset mail a caller's request uses: its own latest `password-reset` version that
        is not retired, else the deployment's latest."""
        if self.store is not None:
            now = self.clock.now()
            answer = self._reset_mails.fresh(caller, now)
            if answer is None:
                self.reads += 1
                answer = _Answer(self.store.reset_mail(caller).stored, now)
                self._reset_mails.keep(caller, answer)
                if answer.stored is not None:
                    self._keep(answer.stored, now)
            if answer.stored is not None:
                return Resolved(answer.stored.version, TemplateOwner.CALLER)
        shared = [found for found in self.deployment.all() if found.id == RESET_TEMPLATE_ID]
        if not shared:
            raise UnknownTemplate(f"this deployment has no {RESET_TEMPLATE_ID} template")
        return Resolved(max(shared, key=lambda found: version_order(found.version)), TemplateOwner.DEPLOYMENT)

    def recorded(self, caller: CallerId, template: Template) -> TemplateVersion:
        """The version a message recorded (its owner's), retired or not: a resend's, a fallback's."""
        if template.owner is TemplateOwner.CALLER:
            if self.store is not None:
                # The words never change: any answer that found them will do, however old.
                answer = self._versions.get((caller, template.id, template.version))
                stored = answer.stored if answer is not None else None
                if stored is None:
                    stored = self._read(caller, template.id, template.version)
                if stored is not None:
                    return stored.version
        else:
            shared = self.deployment.get(template.id, template.version)
            if shared is not None:
                return shared
        raise UnknownTemplate(f"the {template.owner} template {template.id!r} v{template.version} is gone")

    def published(self, stored: StoredVersion) -> None:
        """This container's own publish or retirement: its next send sees it without a read."""
        if stored.owner is None:
            return
        self._keep(stored, self.clock.now())
        if stored.version.id == RESET_TEMPLATE_ID:
            self._reset_mails.drop(stored.owner)  # the pointer was rewritten: read it again

    # --- the cache -----------------------------------------------------------------------------
    def _own(self, caller: CallerId, template_id: str, version: str, *, remember_absence: bool) -> StoredVersion | None:
        if self.store is None:
            return None
        key, now = (caller, template_id, version), self.clock.now()
        answer = self._versions.fresh(key, now)
        if answer is not None:
            return answer.stored
        stored = self._read(caller, template_id, version)
        if stored is not None or remember_absence:
            self._versions.keep(key, _Answer(stored, now))
        return stored

    def _read(self, caller: CallerId, template_id: str, version: str) -> StoredVersion | None:
        assert self.store is not None
        self.reads += 1
        stored = self.store.get(caller, template_id, version)
        if stored is not None:
            self._keep(stored, self.clock.now())
        return stored

    def _keep(self, stored: StoredVersion, now: datetime) -> None:
        assert stored.owner is not None
        self._versions.keep((stored.owner, stored.version.id, stored.version.version), _Answer(stored, now))


def shipped_catalog() -> TemplateCatalog:
    """The shipped templates alone, no table: what tools and tests that publish nothing use."""
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.template_folder import TemplateFolder

    return TemplateCatalog(store=None, deployment=TemplateFolder(), clock=SystemClock(), cache_seconds=1, cache_size=1)
