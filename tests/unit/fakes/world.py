"""A runtime wired to the fakes: what bootstrap builds, without AWS."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from sendledger import bootstrap
from sendledger.bootstrap import LaneBuilder, Runtime
from sendledger.domain.provider import Backoff
from sendledger.ports.providers import EventLane, LaneStores
from sendledger.providers.ses import NAME as SES
from sendledger.providers.ses import SOURCE as SES_SOURCE
from sendledger.providers.ses.events import parse_sqs_body
from sendledger.providers.ses.simulation import SesSimulation
from sendledger.providers.simulated.sender import SimulatedCarriers
from sendledger.providers.sns.lane import log_lane
from sendledger.settings import Fragment, Settings
from sendledger.usecases.queued_events import queue_lane
from tests.support.fakes import FakeClock, FakeSleeper
from tests.unit.fakes.ledger import FakeLedger
from tests.unit.fakes.queues import FakeEscalationQueue, FakeEventQueue, FakeLogReader
from tests.unit.fakes.senders import FakeEmailSender, FakeSmsSender
from tests.unit.fakes.simulated import FakeOutlet

SUCCESS_GROUP, FAILURE_GROUP = "sns/sms/delivery", "sns/sms/delivery/Failure"


def build_runtime(
    ledger: FakeLedger,
    clock: FakeClock,
    settings: Settings,
    email: FakeEmailSender | None = None,
    sms: FakeSmsSender | None = None,
    escalations: FakeEscalationQueue | None = None,
) -> Runtime:
    ledger.caller_settings.clock = clock  # its cache ages with the world's time
    return Runtime.over(
        ledger,
        email=email or FakeEmailSender(),
        sms=sms or FakeSmsSender(),
        clock=clock,
        settings=settings,
        sleep=FakeSleeper(clock=clock),
        backoff=Backoff(rng=lambda: 0.5),
        escalations=escalations,
        lanes_for=lambda settings, stores: [],
        provider_lookups={},
    )


def fake_lanes(ses_queue: FakeEventQueue | None = None, logs: FakeLogReader | None = None) -> LaneBuilder:
    """The SES queue lane and the SMS log lane over the fakes (the default providers' lanes)."""

    def lanes_for(settings: Settings, stores: LaneStores) -> list[EventLane]:
        lanes: list[EventLane] = []
        if ses_queue is not None:
            lanes.append(queue_lane(settings, SES, SES_SOURCE, ses_queue, parse_sqs_body, pushable=True))
        if logs is not None:
            lanes.append(log_lane(settings, stores, logs, [SUCCESS_GROUP, FAILURE_GROUP]))
        return lanes

    return lanes_for


@dataclass
class FakeWorld:
    """Everything a use case touches, in memory: the ledger, the providers, the queues and the clock."""

    clock: FakeClock
    ledger: FakeLedger
    email: FakeEmailSender
    sms: FakeSmsSender
    ses_queue: FakeEventQueue
    logs: FakeLogReader
    escalations: FakeEscalationQueue
    runtime: Runtime

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    def configure(self, **changes: object) -> None:
        """Change settings for the use cases from now on (the runtime rebuilds its flows)."""
        self.runtime.settings = self.runtime.settings.replace(changes)

    def configure_provider(self, kind: type[Fragment], **changes: object) -> None:
        """Change one provider's settings for the use cases from now on."""
        self.runtime.settings = self.runtime.settings.configure_provider(kind, **changes)

    def email_events_by(self, lane: Callable[[Settings, LaneStores], EventLane]) -> None:
        """The email events come by `lane` from now on (the SMS log lane stays)."""
        others = self.runtime.lanes_for

        def lanes_for(settings: Settings, stores: LaneStores) -> list[EventLane]:
            return [lane(settings, stores), *(kept for kept in others(settings, stores) if kept.source == "sms")]

        self.runtime.lanes_for = lanes_for


def fake_world(clock: FakeClock | None = None, settings: Settings | None = None) -> FakeWorld:
    clock = clock or FakeClock()
    settings = (settings or Settings(poll_interval_seconds=60)).replace(
        {"escalation_queue_url": "memory://escalations"}
    )
    ledger, email, sms = FakeLedger(), FakeEmailSender(), FakeSmsSender()
    ses_queue, logs, escalations = FakeEventQueue(), FakeLogReader(), FakeEscalationQueue()
    runtime = build_runtime(ledger, clock, settings, email, sms, escalations)
    # As bootstrap wires it: a test caller's sends are simulated, their events put on these fakes.
    outlet = FakeOutlet(ses_queue, logs, SUCCESS_GROUP, FAILURE_GROUP)
    ses = SesSimulation(settings.sender_email, "sendledger-events", "us-east-1", "123456789012")
    simulation_of = cache(lambda name: ses if name == SES else bootstrap.slice_of(name).simulation(settings))
    runtime.simulated = SimulatedCarriers(outlet, clock, simulation_of)
    runtime.lanes_for = fake_lanes(ses_queue, logs)
    return FakeWorld(clock, ledger, email, sms, ses_queue, logs, escalations, runtime)
