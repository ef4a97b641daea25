"""Which version a send renders, and what it costs: a version is read once per container."""

from __future__ import annotations

import pytest

from sendledger.domain.callers import CallerId
from sendledger.domain.errors import TemplateRetired, UnknownTemplate
from sendledger.domain.messages import Template
from sendledger.domain.template_folder import TemplateFolder
from sendledger.domain.template_versions import TemplateOwner, parse_version
from sendledger.ports.templates import StoredVersion, TemplatesInMemory
from sendledger.usecases.template_catalog import TemplateCatalog
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


def test_a_version_costs_one_read_the_first_time_and_none_after(world):
    clock, store, catalog = world
    store.put_new(StoredVersion(A, version(), clock.now()))
    for _ in range(50):
        assert catalog.for_send(A, "welcome", "1").owner is TemplateOwner.CALLER
        clock.advance(1)
    assert (store.lists, store.gets) == (1, 1)  # the caller's listing, then the words
    # Past the TTL the listing is read again (a retirement may be there); the words never change.
    clock.advance(3600)
    catalog.for_send(A, "welcome", "1")
    assert (store.lists, store.gets) == (2, 1)
    assert catalog.reads == 3


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


def test_a_deployment_template_costs_the_callers_listing_once_per_ttl(world):
    clock, store, catalog = world
    catalog.for_send(A, "alert", "1")
    catalog.for_send(A, "notice", "1")
    catalog.reset_version(A)
    assert (store.lists, store.gets, catalog.reads) == (1, 0, 1)
    store.put_new(StoredVersion(A, version("alert", "1", "Mine"), clock.now()))  # published elsewhere
    clock.advance(61)
    assert catalog.for_send(A, "alert", "1").owner is TemplateOwner.CALLER


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
    recorded = catalog.recorded(A, Template("welcome", "1", owner=TemplateOwner.CALLER))
    assert recorded.sha256 == version().sha256
    # A recorded deployment version is the deployment's, even once the caller shadows it.
    store.put_new(StoredVersion(A, version("alert", "1", "Mine"), clock.now()))
    shared = catalog.recorded(A, Template("alert", "1"))
    assert shared.params == ("summary",)


def test_the_reset_mail_is_the_callers_latest_live_version(world):
    clock, store, catalog = world
    assert catalog.reset_version(A).owner is TemplateOwner.DEPLOYMENT
    for number in ("2", "10", "9"):
        body = {"params": ["reset_link"], "email": {"subject": f"v{number}", "text": "${reset_link}"}}
        parsed = parse_version("password-reset", number, body).version
        assert parsed is not None
        catalog.published(StoredVersion(A, parsed, clock.now()))  # published through this container
    assert catalog.reset_version(A).version.version == "10"  # numbers compare as numbers
    assert catalog.reset_version(B).owner is TemplateOwner.DEPLOYMENT  # B never published one
