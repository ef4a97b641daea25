"""Test mode's carriers, composed over test mode's own event path: the test outcomes queue the
poller drains (outlets.py, outcomes.py). Built by bootstrap on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sendledger.domain.clock import Clock, SystemClock
from sendledger.providers.simulated.outlets import AwsOutlet
from sendledger.providers.simulated.sender import SimulatedCarriers

if TYPE_CHECKING:
    from sendledger.ports.providers import Simulation
    from sendledger.settings import Settings


def carriers_for(
    settings: Settings, simulation_of: Callable[[str], Simulation], clock: Clock | None = None
) -> SimulatedCarriers:
    """Test mode's carriers, putting the events each carrier's simulation reports on the test
    outcomes queue (outlets.py), in that carrier's own shape."""
    outlet = AwsOutlet(queue_url=settings.test_outcomes_queue_url)
    return SimulatedCarriers(outlet, clock or SystemClock(), simulation_of)
