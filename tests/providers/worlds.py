"""Provider worlds: one email provider wired end to end, for the contract suite to run against.

A world is the real api and poller over moto, with the provider's adapter talking to the local
simulator and the provider's events reaching sendledger by that provider's own path. Register a
provider by adding a builder to WORLDS; every test in tests/providers that takes the `world`
fixture then runs against it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from local.simulator import Simulator
from sendledger.domain.provider import EmailProvider
from sendledger.usecases.context import Services
from sendledger.usecases.poll import CycleReport
from tests.conftest import Api
from tests.integration.conftest import Ingestion
from tests.support.fakes import FakeClock


@dataclass
class Parts:
    """What every world shares: moto's services, the api, SES/SNS ingestion, the simulator, the clock."""

    services: Services
    api: Api
    ingestion: Ingestion
    simulator: Simulator
    clock: FakeClock


class ProviderWorld(Protocol):
    provider: EmailProvider
    parts: Parts

    def emit(self) -> None:
        """The provider's events for everything sent so far reach sendledger by the provider's path."""

    def outbox(self) -> list[dict[str, Any]]:
        """Every email this provider accepted (the simulator's outbox entries), oldest first."""


@dataclass
class SesWorld:
    provider: EmailProvider
    parts: Parts

    def emit(self) -> None:
        self.parts.simulator.flush()  # SES records → SNS → the SES events queue

    def outbox(self) -> list[dict[str, Any]]:
        return [entry for entry in self.parts.simulator.outbox() if entry["provider"] == "ses"]


def ses_world(parts: Parts) -> ProviderWorld:
    return SesWorld(EmailProvider.SES, parts)


WORLDS: dict[EmailProvider, Callable[[Parts], ProviderWorld]] = {
    EmailProvider.SES: ses_world,
}


def poll(world: ProviderWorld) -> CycleReport:
    """Emit the provider's events, then run one poll cycle."""
    world.emit()
    return world.parts.ingestion.poll()
