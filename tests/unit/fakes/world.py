"""Services and a Pipeline wired to the fakes: what bootstrap builds, without AWS."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sendledger import bootstrap
from sendledger.domain.provider import Backoff
from sendledger.ports.providers import EventLane
from sendledger.providers.ses import NAME as SES
from sendledger.providers.ses import SOURCE as SES_SOURCE
from sendledger.providers.ses.events import parse_sqs_body
from sendledger.providers.ses.simulation import SesSimulation
from sendledger.providers.simulated.sender import SimulatedCarriers
from sendledger.providers.sns.lane import LogLane
from sendledger.settings import Fragment, Settings
from sendledger.usecases.context import Services
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.queued_events import QueueLane
from tests.support.fakes import FakeClock, FakeSleeper
from tests.unit.fakes.ledger import FakeLedger
from tests.unit.fakes.queues import FakeEscalationQueue, FakeEventQueue, FakeLogReader
from tests.unit.fakes.senders import FakeEmailSender, FakeSmsSender
from tests.unit.fakes.simulated import FakeOutlet

SUCCESS_GROUP, FAILURE_GROUP = "sns/sms/delivery", "sns/sms/delivery/Failure"


def build_services(
    ledger: FakeLedger,
    clock: FakeClock,
    settings: Settings,
    email: FakeEmailSender | None = None,
    sms: FakeSmsSender | None = None,
) -> Services:
    ledger.caller_settings.clock = clock  # its cache ages with the world's time
    return Services(
        **ledger.send_path(),
        email=email or FakeEmailSender(),
        sms=sms or FakeSmsSender(),
        clock=clock,
        settings=settings,
        sleep=FakeSleeper(clock=clock),
        backoff=Backoff(rng=lambda: 0.5),
    )


def build_pipeline(
    services: Services,
    ledger: FakeLedger,
    ses_queue: FakeEventQueue | None = None,
    logs: FakeLogReader | None = None,
    escalations: FakeEscalationQueue | None = None,
) -> Pipeline:
    """The SES queue lane and the SMS log lane over the fakes (the default providers' lanes)."""
    lanes: list[EventLane] = []
    if ses_queue is not None:
        lanes.append(QueueLane(SES, SES_SOURCE, ses_queue, parse_sqs_body, pushable=True))
    if logs is not None:
        lanes.append(LogLane(logs, [SUCCESS_GROUP, FAILURE_GROUP]))
    return Pipeline(
        services=services,
        events=ledger.events,
        due_work=ledger.due_work,
        escalation_timers=ledger.escalation_timers,
        lanes=lanes,
        escalations=escalations,
    )


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
    services: Services
    pipeline: Pipeline

    @property
    def settings(self) -> Settings:
        return self.services.settings

    def configure(self, **changes: object) -> None:
        """Change settings for the use cases from now on (the pipeline shares the services)."""
        self.services.settings = self.services.settings.model_copy(update=changes)

    def configure_provider(self, kind: type[Fragment], **changes: object) -> None:
        """Change one provider's settings for the use cases from now on."""
        self.services.settings = self.services.settings.configure_provider(kind, **changes)


def fake_world(clock: FakeClock | None = None, settings: Settings | None = None) -> FakeWorld:
    clock = clock or FakeClock()
    settings = (settings or Settings(poll_interval_seconds=60)).model_copy(
        update={"escalation_queue_url": "memory://escalations"}
    )
    ledger, email, sms = FakeLedger(), FakeEmailSender(), FakeSmsSender()
    ses_queue, logs, escalations = FakeEventQueue(), FakeLogReader(), FakeEscalationQueue()
    services = build_services(ledger, clock, settings, email, sms)
    # As bootstrap wires it: a test caller's sends are simulated, their events put on these fakes.
    outlet = FakeOutlet(ses_queue, logs, SUCCESS_GROUP, FAILURE_GROUP)
    ses = SesSimulation(settings.sender_email, "sendledger-events", "us-east-1", "123456789012")
    simulation_of = cache(lambda name: ses if name == SES else bootstrap.slice_of(name).simulation(settings))
    services.simulated = SimulatedCarriers(outlet, clock, simulation_of)
    pipeline = build_pipeline(services, ledger, ses_queue, logs, escalations)
    return FakeWorld(clock, ledger, email, sms, ses_queue, logs, escalations, services, pipeline)
