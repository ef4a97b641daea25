"""A warm container's parts and the flows built from them (the api's and the poller's)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sendledger.bootstrap.lazy import on_first_use
from sendledger.bootstrap.slices import (
    LaneBuilder,
    build_caller_admin,
    build_webhook,
    email_sender,
    escalation_queue,
    feature_flags,
    other_email_senders,
    provider_lanes,
    simulated_carriers,
    slice_of,
    sms_sender,
)

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import Clock
    from sendledger.domain.provider import Backoff
    from sendledger.ports.callers import CallerSettingsStore
    from sendledger.ports.flags import FeatureFlags
    from sendledger.ports.ingestion import DeliveryEventStore, DueWorkStore, EscalationQueue, EscalationTimers
    from sendledger.ports.log_subscription import LogSubscription
    from sendledger.ports.messages import MessageStore
    from sendledger.ports.poller_state import PollerStateStore
    from sendledger.ports.providers import (
        AcceptanceLookup,
        EmailSender,
        EventLane,
        LaneStores,
        SimulatedCarriers,
        SmsSender,
    )
    from sendledger.ports.recipients import RecipientStore
    from sendledger.ports.resets import ResetStore
    from sendledger.ports.sms_usage import SmsUsage
    from sendledger.ports.templates import TemplateStore
    from sendledger.settings import Settings
    from sendledger.usecases.callers import CallerAdmin
    from sendledger.usecases.delivery import Delivery, OutcomeRecorder
    from sendledger.usecases.ingest import EventIngest
    from sendledger.usecases.intents import IntentWriter
    from sendledger.usecases.poll import PollCycle
    from sendledger.usecases.resets import ResetMailer, ResetRequests, ResetTokens
    from sendledger.usecases.resolve_unknown import UnknownResolver
    from sendledger.usecases.send import MessageSender
    from sendledger.usecases.send_command import Routing
    from sendledger.usecases.sms_guard import DailyCap, SmsGuard
    from sendledger.usecases.template_catalog import TemplateCatalog
    from sendledger.usecases.templates import TemplateLibrary
    from sendledger.usecases.webhooks import Webhook

T = TypeVar("T")


@dataclass(eq=False)
class Runtime:
    """A warm container's parts, and the flows built from them on first use (each flow object
    takes only the parts it reads). Replacing a part (a test's settings, the local stack's fault
    injection) drops the built flows: the next use builds them over the new part."""

    settings: Settings
    clock: Clock
    messages: MessageStore
    recipients: RecipientStore
    resets: ResetStore
    poller_state: PollerStateStore
    caller_settings: CallerSettingsStore
    email: EmailSender  # the default email provider's (settings.email_provider)
    sms: SmsSender  # the SMS provider's (settings.sms_provider)
    # The other email providers enabled beside the default, by name (each built on first use).
    other_email: Mapping[str, EmailSender] = field(default_factory=dict)
    # What carries a test caller's messages; None: nothing does here (a test message waits `pending`).
    simulated: SimulatedCarriers | None = None
    flags: FeatureFlags | None = None  # None: every flag defers to the settings
    sleep: Callable[[float], None] | None = None  # None: time.sleep
    backoff: Backoff | None = None  # None: the provider call's default backoff
    # The poller's stores (the api never reads them).
    events: DeliveryEventStore | None = None
    due_work: DueWorkStore | None = None
    escalation_timers: EscalationTimers | None = None
    escalations: EscalationQueue | None = None  # None: the settings' queue, if any
    lanes_for: LaneBuilder = provider_lanes
    # By provider name: the API that finds a timed-out send again; None: the enabled slices' (built once).
    provider_lookups: dict[str, AcceptanceLookup] | None = None
    ledger: LedgerTable | None = None  # the webhooks' token items
    # The callers' SMS day counts (the daily cap reads them); None: nothing counts them here, no cap.
    sms_usage: SmsUsage | None = None
    # The admin routes' caller settings and secrets: built on their first request (tests set their own).
    caller_admin: CallerAdmin | None = None
    # The callers' template versions; None: the ledger's (a runtime over fakes keeps them in memory).
    template_store: TemplateStore | None = None
    _flows: dict[str, object] = field(default_factory=dict, init=False, repr=False)

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if not name.startswith("_") and "_flows" in self.__dict__:
            self._flows.clear()

    @classmethod
    def over(cls, ledger: Any, **parts: Any) -> Runtime:
        """A runtime over a ledger's stores (the DynamoDB table, or the tests' fakes)."""
        stores = (
            "messages",
            "recipients",
            "resets",
            "poller_state",
            "caller_settings",
            "events",
            "due_work",
            "escalation_timers",
        )
        # The fakes have no token items (asked of the class: the table builds its own on first use).
        webhooks = ledger if hasattr(type(ledger), "webhook_tokens") else None
        parts.setdefault("sms_usage", getattr(ledger, "sms_usage", None))
        parts.setdefault("template_store", getattr(ledger, "templates", None))
        for name in stores:  # a store given in `parts` stands for the ledger's (not even read)
            if name not in parts:
                parts[name] = getattr(ledger, name)
        return cls(ledger=webhooks, **parts)

    def _flow(self, name: str, build: Callable[[], T]) -> T:
        if name not in self._flows:
            self._flows[name] = build()
        return cast(T, self._flows[name])

    # --- the send path --------------------------------------------------------------------
    @property
    def catalog(self) -> TemplateCatalog:
        """Which template version a send renders: the container's one cache of them."""
        return self._flow("catalog", self._catalog)

    def _catalog(self) -> TemplateCatalog:
        from sendledger.domain.template_folder import TemplateFolder
        from sendledger.ports.templates import TemplatesInMemory
        from sendledger.usecases.template_catalog import TemplateCatalog

        settings = self.settings
        return TemplateCatalog(
            store=self.template_store if self.template_store is not None else TemplatesInMemory(),
            deployment=TemplateFolder(settings.templates_dir or None),
            clock=self.clock,
            cache_seconds=settings.template_cache_seconds,
            cache_size=settings.template_cache_size,
        )

    @property
    def routing(self) -> Routing:
        from sendledger.ports.flags import NoFlags
        from sendledger.usecases.send_command import Routing

        return self._flow("routing", lambda: Routing(self.settings, self.flags or NoFlags(), self.caller_settings))

    @property
    def intents(self) -> IntentWriter:
        from sendledger.usecases.intents import IntentWriter

        return self._flow("intents", lambda: IntentWriter(self.messages, self.poller_state, self.settings))

    @property
    def delivery(self) -> Delivery:
        return self._flow("delivery", self._delivery)

    def _delivery(self) -> Delivery:
        import time

        from sendledger.domain.provider import Backoff
        from sendledger.usecases.delivery import Carriers, Delivery

        carriers = Carriers(self.settings, self.email, self.sms, self.other_email, self.simulated)
        return Delivery(carriers, self.backoff or Backoff(), self.sleep or time.sleep)

    @property
    def outcomes(self) -> OutcomeRecorder:
        from sendledger.usecases.delivery import OutcomeRecorder

        return self._flow("outcomes", lambda: OutcomeRecorder(self.messages, self.settings, self.clock))

    @property
    def daily_cap(self) -> DailyCap | None:
        """The api's view of its callers' SMS day counts (None: nothing counts them here)."""
        from sendledger.usecases.sms_guard import DailyCap

        usage = self.sms_usage
        return self._flow("daily_cap", lambda: DailyCap(usage, self.clock) if usage is not None else None)

    def _sms_guard(self, cap: DailyCap | None) -> SmsGuard:
        from sendledger.usecases.sms_guard import SmsGuard

        return SmsGuard(self.caller_settings, self.settings, cap)

    def _message_sender(self, cap: DailyCap | None) -> MessageSender:
        from sendledger.usecases.send import MessageSender

        guard = self._sms_guard(cap)
        return MessageSender(
            self.routing,
            self.intents,
            self.delivery,
            self.outcomes,
            guard,
            self.messages,
            self.settings,
            self.clock,
            self.catalog,
        )

    @property
    def sender(self) -> MessageSender:
        """The api's sends: the owner's countries and daily cap."""
        return self._flow("sender", lambda: self._message_sender(self.daily_cap))

    @property
    def fallback_sender(self) -> MessageSender:
        """An escalation's fallback: the owner's countries only (its parent was counted, and is the alert)."""
        return self._flow("fallback_sender", lambda: self._message_sender(None))

    @property
    def reset_requests(self) -> ResetRequests:
        from sendledger.usecases.resets import ResetRequests

        build = partial(ResetRequests, self.routing, self.intents, self.settings, self.clock, self.catalog)
        return self._flow("reset_requests", build)

    @property
    def reset_tokens(self) -> ResetTokens:
        from sendledger.usecases.resets import ResetTokens

        limit = self.settings.reset_max_failed_attempts
        return self._flow("reset_tokens", lambda: ResetTokens(self.resets, limit, self.clock))

    # --- the poller -----------------------------------------------------------------------
    @property
    def reset_mailer(self) -> ResetMailer:
        from sendledger.usecases.resets import ResetMailer

        return self._flow(
            "reset_mailer",
            lambda: ResetMailer(
                self.messages, self.resets, self.delivery, self.outcomes, self.settings, self.clock, self.catalog
            ),
        )

    @property
    def sink(self) -> EventIngest:
        return self._flow("sink", self._sink)

    def _sink(self) -> EventIngest:
        from datetime import timedelta

        from sendledger.domain.suppression_rules import TransientPolicy
        from sendledger.usecases.ingest import EventIngest

        settings = self.settings
        policy = TransientPolicy(settings.transient_bounce_limit, timedelta(days=settings.transient_bounce_window_days))
        return EventIngest(self._poller(self.events), policy, self.clock)

    @property
    def log_subscription(self) -> LogSubscription:
        """The SMS logs Lambda's entry: the enabled slice whose statuses are written to CloudWatch Logs."""
        return self._flow("log_subscription", self._log_subscription)

    def _log_subscription(self) -> LogSubscription:
        pieces = (slice_of(provider.value).log_subscription(self.sink) for provider in self.settings.enabled_providers)
        if (found := next((piece for piece in pieces if piece is not None), None)) is None:
            raise LookupError("no provider enabled here writes its statuses to a log subscription")
        return found

    @property
    def lookups(self) -> dict[str, AcceptanceLookup]:
        """By provider name: the API that finds a timed-out send again (built once; tests add theirs)."""
        if self.provider_lookups is None:
            settings = self.settings
            slices = [slice_of(provider.value) for provider in settings.enabled_providers]
            found = {piece.name: lookup for piece in slices if (lookup := piece.lookup(settings)) is not None}
            object.__setattr__(self, "provider_lookups", found)  # the same dict for every flow, kept
        assert self.provider_lookups is not None
        return self.provider_lookups

    @property
    def unknown(self) -> UnknownResolver:
        return self._flow("unknown", self._unknown)

    def _unknown(self) -> UnknownResolver:
        from sendledger.usecases.resends import Resender
        from sendledger.usecases.resolve_unknown import UnknownResolver

        due_work = self._poller(self.due_work)
        resender = Resender(
            self.messages,
            due_work,
            self.resets,
            self.delivery,
            self.outcomes,
            self.reset_mailer,
            self._sms_guard(None),  # the countries as they are now; the first attempt was counted
            self.clock,
            self.catalog,
        )
        return UnknownResolver(
            self.messages, due_work, self.poller_state, self.lookups, resender, self.settings, self.clock
        )

    @property
    def lanes(self) -> list[EventLane]:
        """How each enabled provider's events come in, run by every poll cycle in this order."""
        return self._flow("lanes", self._lanes)

    def _lanes(self) -> list[EventLane]:
        return self.lanes_for(self.settings, self.lane_stores)

    @property
    def lane_stores(self) -> LaneStores:
        """What the slices may hand their lanes."""
        from sendledger.ports.providers import LaneStores

        found = on_first_use(lambda: self.unknown)  # a lane's first found send builds the resolver
        return LaneStores(self.poller_state, self.messages, self._poller(self.due_work), self.clock, found)

    @property
    def poll_cycle(self) -> PollCycle:
        return self._flow("poll_cycle", self._poll_cycle)

    def _poll_cycle(self) -> PollCycle:
        from sendledger.usecases.due_work import DueWorkPass
        from sendledger.usecases.escalate import Escalations
        from sendledger.usecases.poll import CycleMetrics, PollCycle, watermark_sources

        due_work, settings = self._poller(self.due_work), self.settings
        # The send path is built by the first cycle that has an unknown, a pending or an escalation to handle.
        unknown = on_first_use(lambda: self.unknown)
        escalations = Escalations(
            due_work,
            self._poller(self.escalation_timers),
            self.messages,
            self.escalations or escalation_queue(settings),
            on_first_use(lambda: self.fallback_sender),  # a fallback goes through the one send entry
            settings,
            self.clock,
        )
        lanes = self.lanes
        return PollCycle(
            lanes,
            self.sink,
            self.poller_state,
            DueWorkPass(due_work, self.messages, unknown, on_first_use(lambda: self.unknown.resender), self.clock),
            escalations,
            CycleMetrics(watermark_sources(lanes), self.poller_state, due_work, self.clock),
            self.clock,
        )

    @staticmethod
    def _poller(store: T | None) -> T:
        if store is None:
            raise LookupError("this runtime has no ledger for the poller (build it with Runtime.over)")
        return store

    # --- routes built on their first request -------------------------------------------
    def webhook(self, provider: str) -> Webhook | None:
        """A provider's webhook route, built on its first request (never on the send path);
        None when the provider is not enabled here, does not push, or is not configured."""
        return self._flow(
            f"webhook:{provider}", lambda: build_webhook(self.settings, self.clock, self.ledger, provider)
        )

    def template_library(self) -> TemplateLibrary:
        """The template routes' use cases, built on their first request (a send never needs them)."""
        from sendledger.usecases.templates import TemplateLibrary

        catalog = self.catalog  # what a publish writes, this container's next send sees
        assert catalog.store is not None  # a runtime's catalog always has one (in memory over fakes)
        library = partial(TemplateLibrary, store=catalog.store, deployment=catalog.deployment, catalog=catalog)
        return self._flow("template_library", lambda: library(clock=self.clock))

    def callers(self) -> CallerAdmin:
        if self.caller_admin is not None:
            return self.caller_admin
        return self._flow(
            "callers", lambda: build_caller_admin(self.caller_settings, self.settings, self.clock, self.sms_usage)
        )


@cache
def runtime() -> Runtime:
    return build_runtime()


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.adapters.secrets import fingerprint_key
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.recipients import use_fingerprint_key
    from sendledger.settings import Settings

    settings = settings or Settings.from_env()
    # Before any use case runs: provider event ids contain fingerprints, so every container must agree.
    use_fingerprint_key(fingerprint_key(settings.fingerprint_secret_arn))
    clock = clock or SystemClock()
    ledger = LedgerTable.named(settings.table_name, clock)
    return Runtime.over(
        ledger,
        # The poller's stores: the api never reads them, nor imports their modules.
        events=on_first_use(lambda: ledger.events),
        due_work=on_first_use(lambda: ledger.due_work),
        escalation_timers=on_first_use(lambda: ledger.escalation_timers),
        settings=settings,
        clock=clock,
        email=email_sender(settings),
        sms=sms_sender(settings),
        other_email=other_email_senders(settings),
        flags=on_first_use(lambda: feature_flags(settings)),
        simulated=on_first_use(lambda: simulated_carriers(settings)),
    )
