"""Composition root: the one place adapters are built, once per warm container.

Each handler takes an optional ``runtime``; without one it uses :func:`runtime`, built on the
first invocation. Tests and the local stack pass their own (moto, a fake clock, fakes).
Adapter modules are imported inside the builders, so boto3 and botocore load on the
first invocation rather than with every handler module (the cold-start bar).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.callers import CallerId
    from sendledger.domain.clock import Clock
    from sendledger.domain.flags import FlagValues
    from sendledger.domain.messages import Message
    from sendledger.ports.flags import FeatureFlags
    from sendledger.ports.providers import EmailSender, ProviderSlice, SimulatedCarriers, Simulation, SmsSender
    from sendledger.ports.sms_usage import SmsUsage
    from sendledger.ports.status_out import CallbackQueue, EligibilityLabels, StatusChangeSource, StatusEventBus
    from sendledger.settings import Settings
    from sendledger.usecases.callbacks import CallbackPolicy, Receivers
    from sendledger.usecases.callers import CallerAdmin
    from sendledger.usecases.context import Services
    from sendledger.usecases.ingest import Pipeline
    from sendledger.usecases.sms_guard import DailyCap
    from sendledger.usecases.template_catalog import TemplateCatalog
    from sendledger.usecases.templates import TemplateLibrary
    from sendledger.usecases.webhooks import Webhook


@dataclass
class Runtime:
    """The send path's services, and the ingestion pipeline built on first use (the api never needs it)."""

    services: Services
    build_pipeline: Callable[[], Pipeline]
    ledger: LedgerTable | None = None
    # The api's view of its callers' SMS day counts (the daily cap): None where nothing counts them.
    daily_cap: DailyCap | None = None
    _pipeline: Pipeline | None = field(default=None, init=False, repr=False)
    _webhooks: dict[str, Webhook | None] = field(default_factory=dict, init=False, repr=False)
    # The admin routes' caller settings and secrets: built on their first request (tests set their own).
    caller_admin: CallerAdmin | None = None
    # Which template a send renders (caller's, then the deployment's), its LRU built on first use.
    catalog: TemplateCatalog | None = None
    _library: TemplateLibrary | None = field(default=None, init=False, repr=False)

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = self.build_pipeline()
        return self._pipeline

    def webhook(self, provider: str) -> Webhook | None:
        """A provider's webhook route, built on its first request (never on the send path);
        None when the provider is not enabled here, does not push, or is not configured."""
        if provider not in self._webhooks:
            services = self.services
            self._webhooks[provider] = build_webhook(services.settings, services.clock, self.ledger, provider)
        return self._webhooks[provider]

    @property
    def templates(self) -> TemplateCatalog:
        if self.catalog is None:
            self.catalog = build_catalog(self.services, self.ledger)
        return self.catalog

    def template_library(self) -> TemplateLibrary:
        """The template routes' use cases, built on their first request (a send never needs them)."""
        if self._library is None:
            self._library = build_template_library(self.services, self.templates)
        return self._library

    def callers(self) -> CallerAdmin:
        if self.caller_admin is None:
            self.caller_admin = build_caller_admin(self.services, self.ledger)
        return self.caller_admin

    @classmethod
    def of(cls, services: Services, ledger: LedgerTable) -> Runtime:
        """A runtime around services someone else built (tests, the local stack, benchmarks)."""
        from sendledger.usecases.sms_guard import DailyCap

        cap = DailyCap(ledger.sms_usage, services.clock)
        return cls(services, lambda: build_pipeline(services, ledger), ledger, daily_cap=cap)


@cache
def runtime() -> Runtime:
    return build_runtime()


def build_runtime(settings: Settings | None = None) -> Runtime:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.adapters.secrets import fingerprint_key
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.recipients import use_fingerprint_key
    from sendledger.settings import Settings
    from sendledger.usecases.context import Services

    settings = settings or Settings.from_env()
    # Before any use case runs: provider event ids contain fingerprints, so every container must agree.
    use_fingerprint_key(fingerprint_key(settings.fingerprint_secret_arn))
    ledger = LedgerTable.named(settings.table_name)
    services = Services(
        **ledger.send_path(),
        email=email_sender(settings),
        sms=sms_sender(settings),
        clock=SystemClock(),
        settings=settings,
        other_email=OtherEmailSenders(settings),
        flags=FlagsOnFirstUse(lambda: feature_flags(settings)),
        simulated=SimulatedOnFirstUse(lambda: simulated_carriers(settings)),
    )
    return Runtime.of(services, ledger)


class SimulatedOnFirstUse:
    """A test caller's carriers, built by its first send: real callers' containers never build them."""

    def __init__(self, build: Callable[[], SimulatedCarriers]) -> None:
        self._build = build
        self._built: SimulatedCarriers | None = None

    def _carriers(self) -> SimulatedCarriers:
        if self._built is None:
            self._built = self._build()
        return self._built

    def email_sender(self, message: Message) -> EmailSender:
        return self._carriers().email_sender(message)

    def sms_sender(self, message: Message) -> SmsSender:
        return self._carriers().sms_sender(message)


def simulated_carriers(settings: Settings, clock: Clock | None = None) -> SimulatedCarriers:
    """Test mode's carriers over this deployment's event paths (the simulated slice composes them)."""
    from sendledger.providers.simulated.compose import carriers_for

    return carriers_for(settings, simulations(settings), clock)


def simulations(settings: Settings) -> Callable[[str], Simulation]:
    """Each registered provider's simulation by its name, built on first ask (KeyError: no such provider)."""
    return cache(lambda name: slice_of(name).simulation(settings))


def build_catalog(services: Services, ledger: LedgerTable | None) -> TemplateCatalog:
    """The deployment's folder (TEMPLATES_DIR, else the shipped one) and the callers' items."""
    from sendledger.adapters.dynamodb.templates import DynamoTemplates
    from sendledger.domain.template_folder import TemplateFolder
    from sendledger.ports.templates import TemplatesInMemory
    from sendledger.usecases.template_catalog import TemplateCatalog

    settings = services.settings
    return TemplateCatalog(
        store=DynamoTemplates(ledger.table) if ledger is not None else TemplatesInMemory(),
        deployment=TemplateFolder(settings.templates_dir or None),
        clock=services.clock,
        cache_seconds=settings.template_cache_seconds,
        cache_size=settings.template_cache_size,
    )


def build_template_library(services: Services, catalog: TemplateCatalog) -> TemplateLibrary:
    """Over the catalog's store and folder: what a publish writes, the next send reads."""
    from sendledger.ports.templates import TemplatesInMemory
    from sendledger.usecases.templates import TemplateLibrary

    store = catalog.store or TemplatesInMemory()
    return TemplateLibrary(store=store, deployment=catalog.deployment, catalog=catalog, clock=services.clock)


def build_caller_admin(services: Services, ledger: LedgerTable | None = None) -> CallerAdmin:
    from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver
    from sendledger.ports.sms_usage import SmsUsageInMemory
    from sendledger.usecases.callers import CallerAdmin

    settings = services.settings
    return CallerAdmin(
        store=services.caller_settings,
        secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, services.clock),
        resolver=SocketResolver(),
        clock=services.clock,
        sms_usage=ledger.sms_usage if ledger is not None else SmsUsageInMemory(),
        sms_default_countries=settings.sms_default_countries,
        allow_loopback=settings.callback_allow_loopback,
    )


class FlagsOnFirstUse:
    """The flags port, built by the first send: a Lambda that never decides a send (the SMS
    delivery logs, most poll cycles) never imports Powertools Feature Flags nor makes its client."""

    def __init__(self, build: Callable[[], FeatureFlags]) -> None:
        self._build = build
        self._built: FeatureFlags | None = None

    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        if self._built is None:
            self._built = self._build()
        return self._built.values_for(caller, context)


def feature_flags(settings: Settings, appconfig_client: object = None) -> FeatureFlags:
    """Powertools Feature Flags over the store `FLAGS_STORE` names, both cached `FLAGS_CACHE_SECONDS`."""
    from pathlib import Path

    from aws_lambda_powertools.utilities.feature_flags import AppConfigStore, StoreProvider

    from sendledger.adapters.feature_flags import COMMITTED_FLAGS, FileStore, PowertoolsFlags
    from sendledger.settings import CATEGORIES, FlagStore, SettingsError

    ttl = settings.flags_cache_seconds
    store: StoreProvider
    if settings.flags_store is FlagStore.APPCONFIG:
        application = settings.flags_appconfig_application
        environment, profile = settings.flags_appconfig_environment, settings.flags_appconfig_profile
        if not (application and environment and profile):
            raise SettingsError("FLAGS_STORE=appconfig needs FLAGS_APPCONFIG_APPLICATION, _ENVIRONMENT and _PROFILE")
        store = AppConfigStore(
            environment=environment,
            application=application,
            name=profile,
            max_age=ttl,
            boto3_client=appconfig_client or _appconfig_client(),
        )
    else:
        store = FileStore(Path(settings.flags_file) if settings.flags_file else COMMITTED_FLAGS, ttl)
    return PowertoolsFlags(store, CATEGORIES, retry_after_seconds=ttl)


def _appconfig_client() -> object:
    from sendledger.adapters import sdk

    # Reads, safe to retry; a short timeout: a slow store must not hold a send (its defaults apply).
    return sdk.client("appconfigdata", sdk.config(retries=sdk.STANDARD_RETRIES, read_timeout=2, connect_timeout=1))


@cache
def slice_of(name: str) -> ProviderSlice:
    """The slice of a registered provider (KeyError for a name the domain's registry does not
    list): the one place a provider's package is loaded by its name."""
    from sendledger.domain.provider import registered

    found: ProviderSlice = importlib.import_module(f"sendledger.providers.{registered(name).value}").SLICE
    return found


def email_sender(settings: Settings, provider: str | None = None) -> EmailSender:
    """The email port's adapter of `provider` (default: the deployment's default email provider)."""
    from sendledger.providers.injected import TimeoutAfterAcceptance

    sender = slice_of(provider or settings.email_provider.value).email_sender(settings)
    return TimeoutAfterAcceptance(sender) if settings.inject_timeouts else sender


def sms_sender(settings: Settings) -> SmsSender:

    return slice_of(settings.sms_provider.value).sms_sender(settings)


class OtherEmailSenders(Mapping[str, "EmailSender"]):
    """The senders of the email providers enabled beside the default, each built on its first send."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.names = [provider.value for provider in settings.enabled_email_providers[1:]]
        self._built: dict[str, EmailSender] = {}

    def __getitem__(self, provider: str) -> EmailSender:
        if provider not in self.names:
            raise KeyError(provider)
        if provider not in self._built:
            self._built[provider] = email_sender(self.settings, provider)
        return self._built[provider]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@cache
def webhook(provider: str) -> Webhook | None:
    """The webhook function's container (handlers/webhooks.py): settings, the ledger's token items and
    a clock, no send path and no recipient key (an intake queues bodies; it reads no recipient)."""
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings

    settings = Settings.from_env()
    return build_webhook(settings, SystemClock(), LedgerTable.named(settings.table_name), provider)


def build_webhook(settings: Settings, clock: Clock, ledger: LedgerTable | None, provider: str) -> Webhook | None:
    from sendledger.adapters.sqs_sink import SqsEventSink
    from sendledger.usecases.webhooks import Webhook

    if ledger is None or provider not in {enabled.value for enabled in settings.enabled_providers}:
        return None
    piece = slice_of(provider)
    configured = piece.webhook(settings)
    if configured is None:
        return None
    intake, queue_url = configured
    return Webhook(piece.source, intake, SqsEventSink(queue_url), ledger.webhook_tokens, clock)


def build_pipeline(services: Services, ledger: LedgerTable) -> Pipeline:
    """The ingestion stores share the ledger's DynamoDB client (one connection, one request count);
    each enabled provider brings its lanes and its lookup."""
    from sendledger.adapters.sqs import SqsEscalationQueue
    from sendledger.providers.simulated.outcomes import test_outcomes_lane
    from sendledger.usecases.ingest import Pipeline

    settings = services.settings
    slices = [slice_of(provider.value) for provider in settings.enabled_providers]
    lookups = {piece.name: lookup for piece in slices if (lookup := piece.lookup(settings)) is not None}
    lanes = [lane for piece in slices for lane in piece.lanes(settings)]
    test_lane = test_outcomes_lane(settings, simulations(settings))  # test mode's simulated events: their own path
    return Pipeline(
        services=services,
        events=ledger.events,
        due_work=ledger.due_work,
        escalation_timers=ledger.escalation_timers,
        lanes=lanes if test_lane is None else [*lanes, test_lane],
        escalations=SqsEscalationQueue(settings.escalation_queue_url) if settings.escalation_queue_url else None,
        lookups=lookups,
    )


@dataclass
class StatusOut:
    """The publisher's and the callbacks' adapters (the send path's are never built for them)."""

    settings: Settings
    changes: StatusChangeSource
    bus: StatusEventBus
    labels: EligibilityLabels  # `allow` sends' labels, from the recipient updates they committed
    receivers: Receivers  # each caller's URL and secrets (cached), the resolver, the HTTP endpoint
    queues: Callable[[str], CallbackQueue]  # by the queue's ARN
    clock: Clock
    sms_usage: SmsUsage  # the publisher adds each batch's SMS segments per caller and day
    # The longest a `queues` call can take: with the POST's timeout, one record's time budget.
    retry_call_seconds: float = 0

    @property
    def policy(self) -> CallbackPolicy:
        from sendledger.usecases.callbacks import CallbackPolicy

        settings = self.settings
        return CallbackPolicy(
            retry_base_seconds=settings.callback_retry_base_seconds,
            max_attempts=settings.callback_max_attempts,
            timeout_seconds=settings.callback_timeout_seconds,
            allow_loopback=settings.callback_allow_loopback,
            queue_call_seconds=self.retry_call_seconds,
        )


@cache
def status_out() -> StatusOut:
    return build_status_out()


def build_status_out(settings: Settings | None = None, client: object = None) -> StatusOut:
    from sendledger.adapters.callback_queue import CALL_SECONDS, SqsCallbackQueue
    from sendledger.adapters.callback_secrets import SECRET_MAX_AGE, SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver, UrllibEndpoint
    from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
    from sendledger.adapters.dynamodb.labels import StalenessLabels
    from sendledger.adapters.dynamodb.sms_usage import DynamoSmsUsage
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.adapters.eventbridge import EventBridgeBus
    from sendledger.domain.callback_schedule import CircuitBreakers
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings
    from sendledger.usecases.callbacks import Receivers

    settings = settings or Settings.from_env()
    clock = SystemClock()
    table = Table(settings.table_name, client)
    return StatusOut(
        settings=settings,
        changes=LedgerStream(table),
        bus=EventBridgeBus(settings.event_bus_name),
        labels=StalenessLabels(table),
        receivers=Receivers(
            callers=DynamoCallerSettings(table, clock),
            secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock, SECRET_MAX_AGE),
            resolver=SocketResolver(),
            endpoint=UrllibEndpoint(),
            breakers=CircuitBreakers(),
        ),
        queues=SqsCallbackQueue.of_queue,
        clock=clock,
        sms_usage=DynamoSmsUsage(table),
        retry_call_seconds=CALL_SECONDS,
    )
