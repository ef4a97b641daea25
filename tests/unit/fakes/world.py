"""Services and a Pipeline wired to the fakes: what bootstrap builds, without AWS."""

from __future__ import annotations

from dataclasses import dataclass

from sendledger.domain.provider import Backoff
from sendledger.settings import Settings
from sendledger.usecases.context import Services
from sendledger.usecases.ingest import Pipeline
from tests.support.fakes import FakeClock, FakeSleeper
from tests.unit.fakes.ledger import FakeLedger
from tests.unit.fakes.queues import FakeEscalationQueue, FakeEventQueue, FakeLogReader
from tests.unit.fakes.senders import FakeEmailSender, FakeSmsSender

SUCCESS_GROUP, FAILURE_GROUP = "sns/sms/delivery", "sns/sms/delivery/Failure"


def build_services(
    ledger: FakeLedger,
    clock: FakeClock,
    settings: Settings,
    email: FakeEmailSender | None = None,
    sms: FakeSmsSender | None = None,
) -> Services:
    return Services(
        messages=ledger.messages,
        recipients=ledger.recipients,
        resets=ledger.resets,
        poller_state=ledger.poller_state,
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
    return Pipeline(
        services=services,
        events=ledger.events,
        due_work=ledger.due_work,
        escalation_timers=ledger.escalation_timers,
        ses_queue=ses_queue,
        logs=logs,
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


def fake_world(clock: FakeClock | None = None, settings: Settings | None = None) -> FakeWorld:
    clock = clock or FakeClock()
    settings = (settings or Settings(poll_interval_seconds=60)).model_copy(
        update={
            "ses_events_queue_url": "memory://ses-events",
            "escalation_queue_url": "memory://escalations",
            "sms_success_log_group": SUCCESS_GROUP,
            "sms_failure_log_group": FAILURE_GROUP,
        }
    )
    ledger, email, sms = FakeLedger(), FakeEmailSender(), FakeSmsSender()
    ses_queue, logs, escalations = FakeEventQueue(), FakeLogReader(), FakeEscalationQueue()
    services = build_services(ledger, clock, settings, email, sms)
    pipeline = build_pipeline(services, ledger, ses_queue, logs, escalations)
    return FakeWorld(clock, ledger, email, sms, ses_queue, logs, escalations, services, pipeline)
