"""Use cases over the in-memory fakes (tests/unit/fakes): no moto, no AWS clients."""

from __future__ import annotations

import pytest

from sendledger.settings import Settings
from tests.support.fakes import FakeClock
from tests.unit.fakes import FakeWorld, fake_world


@pytest.fixture
def world(clock: FakeClock, settings: Settings) -> FakeWorld:
    return fake_world(clock, settings)
