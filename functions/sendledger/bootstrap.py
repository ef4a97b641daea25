"""Composition root: the one place adapters are built, once per warm container.

Each handler takes an optional ``runtime``; without one it uses :func:`runtime`, built on the
first invocation. Tests and the local stack pass their own (moto, a fake clock, fakes).
Adapter modules are imported inside the builders, so boto3 and botocore load on the
first invocation rather than with every handler module (the cold-start bar).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import Clock
    from sendledger.ports import CallbackEndpoint, CallbackRetries, StatusChangeSource, StatusEventBus
    from sendledger.settings import Settings
    from sendledger.usecases.context import Services
    from sendledger.usecases.ingest import Pipeline


@dataclass
class Runtime:
    """The send path's services, and the ingestion pipeline built on first use (the api never needs it)."""

    services: Services
    build_pipeline: Callable[[], Pipeline]
    _pipeline: Pipeline | None = field(default=None, init=False, repr=False)

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = self.build_pipeline()
        return self._pipeline

    @classmethod
    def of(cls, services: Services, ledger: LedgerTable) -> Runtime:
        """A runtime around services someone else built (tests, the local stack, benchmarks)."""
        return cls(services, lambda: build_pipeline(services, ledger))


@cache
def runtime() -> Runtime:
    return build_runtime()


def build_runtime(settings: Settings | None = None) -> Runtime:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.adapters.secrets import fingerprint_key
    from sendledger.adapters.ses import SesEmailSender
    from sendledger.adapters.sns import SnsSmsSender
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.recipients import use_fingerprint_key
    from sendledger.settings import Settings
    from sendledger.usecases.context import Services

    settings = settings or Settings.from_env()
    # Before any use case runs: SES event ids contain fingerprints, so every container must agree.
    use_fingerprint_key(fingerprint_key(settings.fingerprint_secret_arn))
    ledger = LedgerTable.named(settings.table_name)
    services = Services(
        **ledger.send_path(),
        email=SesEmailSender(settings.sender_email, settings.ses_configuration_set),
        sms=SnsSmsSender(),
        clock=SystemClock(),
        settings=settings,
    )
    return Runtime.of(services, ledger)


def build_pipeline(services: Services, ledger: LedgerTable) -> Pipeline:
    """The ingestion stores share the ledger's DynamoDB client (one connection, one request count)."""
    from sendledger.adapters.cloudwatch_logs import CloudWatchLogReader
    from sendledger.adapters.sqs import SqsEscalationQueue, SqsEventQueue
    from sendledger.usecases.ingest import Pipeline

    settings = services.settings
    logs = settings.sms_success_log_group or settings.sms_failure_log_group
    return Pipeline(
        services=services,
        events=ledger.events,
        due_work=ledger.due_work,
        escalation_timers=ledger.escalation_timers,
        ses_queue=SqsEventQueue(settings.ses_events_queue_url) if settings.ses_events_queue_url else None,
        logs=CloudWatchLogReader() if logs else None,
        escalations=SqsEscalationQueue(settings.escalation_queue_url) if settings.escalation_queue_url else None,
    )


@dataclass
class StatusOut:
    """The publisher's and the callbacks' adapters (the send path's are never built for them)."""

    settings: Settings
    changes: StatusChangeSource
    bus: StatusEventBus
    endpoint: CallbackEndpoint
    retries: Callable[[str], CallbackRetries]  # by queue URL or ARN
    secret: Callable[[], str]  # cached; re-read when the cache expires (rotation)
    clock: Clock


@cache
def status_out() -> StatusOut:
    return build_status_out()


def build_status_out(settings: Settings | None = None, client: object = None) -> StatusOut:
    from sendledger.adapters.callbacks_http import UrllibEndpoint, callback_secret
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.adapters.eventbridge import EventBridgeBus
    from sendledger.adapters.sqs_visibility import SqsVisibility
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings

    settings = settings or Settings.from_env()
    return StatusOut(
        settings=settings,
        changes=LedgerStream(Table(settings.table_name, client)),
        bus=EventBridgeBus(settings.event_bus_name),
        endpoint=UrllibEndpoint(),
        retries=SqsVisibility.of_queue,
        secret=lambda: callback_secret(settings),
        clock=SystemClock(),
    )
