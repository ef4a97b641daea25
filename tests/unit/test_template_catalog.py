"""Which version a send renders, and what it costs: a version is read once per container."""

from __future__ import annotations

import pytest

from sendledger.domain.callers import CallerId
from sendledger.domain.errors import TemplateRetired, UnknownTemplate
from sendledger.domain.messages import Template
from sendledger.domain.template_folder import TemplateFolder
from sendledger.domain.template_rules import parse_version
from sendledger.domain.template_versions import TemplateOwner
from sendledger.ports.templates import StoredVersion, TemplatesInMemory
from sendledger.usecases.template_catalog import TemplateCatalog
from sendledger.usecases.templates import Published, TemplateLibrary
from tests.support.fakes import FakeClock

A, B = CallerId("caller-a"), CallerId("caller-b")


def version(template_id="welcome", number="1", text="Hello"):
    parsed = parse_version(template_id, number, {"params": [], "sms": {"text": text}})
    assert parsed.version is not None
    return parsed.version


@pytest.fixture
def world():
    clock, store = FakeClock(), TemplatesInMemory()
    catalog = TemplateCatalog(store=store, deployment=TemplateFolder(), clock=clock, cache_seconds=60, cache_size=2)
    return clock, store, catalog


def library(world):
    clock, store, catalog = world
    return TemplateLibrary(store=store, deployment=catalog.deployment, catalog=catalog, clock=clock)


def test_a_version_costs_one_read_the_first_time_and_none_after(world):
    clock, store, catalog = world
    store.put_new(StoredVersion(A, version(), clock.now()))
    for _ in range(50):
        assert catalog.for_send(A, "welcome", "1").owner is TemplateOwner.CALLER
        clock.advance(1)
    assert (store.lists, store.gets, catalog.reads) == (0, 1, 1)  # one GetItem, never a listing
    # Past the TTL the version is read again (a retirement may be there).
    clock.advance(3600)
    catalog.for_send(A, "welcome", "1")
    assert (store.lists, store.gets, catalog.reads) == (0, 2, 2)


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(world):
    clock, store, catalog = world
    for name in ("one", "two", "three"):
        store.put_new(StoredVersion(A, version(name), clock.now()))
    catalog.for_send(A, "one", "1")
    catalog.for_send(A, "two", "1")
    catalog.for_send(A, "one", "1")  # "one" is now the most recent
    catalog.for_send(A, "three", "1")  # evicts "two"'s words
    reads = store.gets
    assert reads == 3
    catalog.for_send(A, "one", "1")
    assert store.gets == reads
    catalog.for_send(A, "two", "1")
    assert store.gets == reads + 1


def test_callers_resolve_their_own_first_then_the_deployments(world):
    clock, store, catalog = world
    store.put_new(StoredVersion(A, version("alert", "1", "Mine"), clock.now()))
    assert catalog.for_send(A, "alert", "1").version.variants  # A's own
    assert catalog.for_send(A, "alert", "1").owner is TemplateOwner.CALLER
    assert catalog.for_send(B, "alert", "1").owner is TemplateOwner.DEPLOYMENT
    with pytest.raises(UnknownTemplate):
        catalog.for_send(B, "welcome", "1")


def test_a_deployment_template_costs_one_read_per_caller_and_version_within_the_ttl(world):
    clock, store, catalog = world
    for _ in range(20):
        catalog.for_send(A, "alert", "1")
        catalog.for_send(A, "notice", "1")
    assert (store.lists, store.gets, catalog.reads) == (0, 2, 2)  # "A has none of its own", each
    store.put_new(StoredVersion(A, version("alert", "1", "Mine"), clock.now()))  # published elsewhere
    clock.advance(59)
    assert catalog.for_send(A, "alert", "1").owner is TemplateOwner.DEPLOYMENT  # remembered absence
    clock.advance(1)
    assert catalog.for_send(A, "alert", "1").owner is TemplateOwner.CALLER  # seen once it is 60 s old


def test_an_unknown_template_is_never_remembered(world):
    clock, store, catalog = world
    with pytest.raises(UnknownTemplate):
        catalog.for_send(A, "welcome", "1")
    store.put_new(StoredVersion(A, version(), clock.now()))  # the push right after
    assert catalog.for_send(A, "welcome", "1").owner is TemplateOwner.CALLER


def test_retired_refuses_new_sends_but_renders_the_recorded_version(world):
    clock, store, catalog = world
    store.put_new(StoredVersion(A, version(), clock.now()))
    catalog.for_send(A, "welcome", "1")
    store.retire(A, "welcome", "1", clock.now())  # by another container
    clock.advance(61)
    with pytest.raises(TemplateRetired):
        catalog.for_send(A, "welcome", "1")
    reads = store.gets
    recorded = catalog.recorded(A, Template("welcome", "1", owner=TemplateOwner.CALLER))
    assert recorded.sha256 == version().sha256 and store.gets == reads  # the words held: no read
    # A recorded deployment version is the deployment's, even once the caller shadows it.
    store.put_new(StoredVersion(A, version("alert", "1", "Mine"), clock.now()))
    shared = catalog.recorded(A, Template("alert", "1"))
    assert shared.params == ("summary",)


def reset_body(number):
    return {"params": ["reset_link"], "email": {"subject": f"v{number}", "text": "${reset_link}"}}


def test_the_reset_mail_is_the_callers_latest_live_version_in_one_read(world):
    clock, store, catalog = world
    templates = library(world)
    assert catalog.reset_version(A).owner is TemplateOwner.DEPLOYMENT
    for number in ("2", "10", "9"):
        assert isinstance(templates.publish(A, "password-reset", number, reset_body(number)), Published)
    other = TemplateCatalog(store=store, deployment=catalog.deployment, clock=clock, cache_seconds=60, cache_size=2)
    reads = store.gets
    assert other.reset_version(A).version.version == "10"  # numbers compare as numbers
    assert other.recorded(A, Template("password-reset", "10", owner=TemplateOwner.CALLER)).version == "10"
    assert store.gets == reads + 1 and other.reads == 1  # the pointer carries the words
    assert other.reset_version(B).owner is TemplateOwner.DEPLOYMENT  # B never published one
    # Retiring the latest points the mails at the one before it; another container sees it
    # once its answer is 60 s old.
    templates.retire(A, "password-reset", "10")
    assert catalog.reset_version(A).version.version == "9"  # the retiring container: at once
    assert other.reset_version(A).version.version == "10"
    clock.advance(60)
    assert other.reset_version(A).version.version == "9"
    for number in ("2", "9"):
        templates.retire(A, "password-reset", number)
    assert catalog.reset_version(A).owner is TemplateOwner.DEPLOYMENT


def test_concurrent_rewrites_of_the_reset_pointer_end_at_the_latest_live_version(world):
    """Each rewrite is conditional on the revision read before the versions were: a publish that
    read the versions before a retirement, and would write what that retirement removed, loses
    and reads again."""
    clock, store, catalog = world
    templates = library(world)
    templates.publish(A, "password-reset", "1", reset_body("1"))
    real_versions = store.versions
    raced = []

    def versions_then_a_retirement(owner, template_id=None):
        found = real_versions(owner, template_id)
        if not raced:  # another request retires 2 between this read and the pointer's rewrite
            raced.append(True)
            store.retire(A, "password-reset", "2", clock.now())
            store.point_reset_mail(A, store.get(A, "password-reset", "1"), store.reset_mail(A).revision)
        return found

    store.versions = versions_then_a_retirement
    templates.publish(A, "password-reset", "2", reset_body("2"))
    assert store.reset_mail(A).stored is not None
    assert store.reset_mail(A).stored.version.version == "1"  # 2 is retired: never pointed at
