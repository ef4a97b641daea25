"""The `world` fixture: each contract test runs once per registered provider (worlds.WORLDS)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from local.simulator import Simulator
from sendledger.bootstrap import Runtime
from sendledger.domain.provider import Provider
from tests.conftest import TABLE, Api
from tests.integration.conftest import make_ingestion
from tests.providers.worlds import WORLDS, Parts, ProviderWorld
from tests.support.fakes import FakeClock
from tests.support.fixtures import put_watermark


@contextmanager
def built_world(
    build: Callable[[Parts], ProviderWorld],
    provider: Provider,
    services: Runtime,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[ProviderWorld]:
    from aws_lambda_powertools.utilities import parameters

    from sendledger.adapters import aws as aws_clients

    parameters.clear_caches()  # secrets of an earlier test's moto account must not be served
    # Installed before any client is built: the hooks are copied into each new client.
    aws_clients.client.cache_clear()
    simulator = Simulator.install(clock=clock.now)
    ingestion = make_ingestion(services)  # SES and SNS, which the world then replaces in part
    services.settings = services.settings.replace({"email_provider": provider})
    parts = Parts(services, Api(services, monkeypatch), ingestion, simulator, clock)
    world = build(parts)
    for source in ("ses", "sms", provider.value):
        put_watermark(TABLE, source, clock.now())  # a healthy pipeline: every source drained just now
    try:
        yield world
    finally:
        simulator.uninstall()
        close = getattr(world, "close", None)  # a world serving a provider's HTTP API stops it
        if close is not None:
            close()


@pytest.fixture(params=sorted(WORLDS), ids=str)
def world(
    request: pytest.FixtureRequest, services: Runtime, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderWorld]:
    with built_world(WORLDS[request.param], request.param, services, clock, monkeypatch) as built:
        yield built
