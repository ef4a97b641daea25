"""The one place a provider's slice is loaded by its name, and what is built from the slices:
senders, lanes, simulations, webhooks, Feature Flags, the admin routes' parts."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING

from sendledger.bootstrap.lazy import on_first_use

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import Clock
    from sendledger.ports.callers import CallerSettingsStore
    from sendledger.ports.flags import FeatureFlags
    from sendledger.ports.ingestion import EscalationQueue
    from sendledger.ports.providers import (
        EmailSender,
        EventLane,
        LaneStores,
        ProviderSlice,
        SimulatedCarriers,
        Simulation,
        SmsSender,
    )
    from sendledger.ports.sms_usage import SmsUsage
    from sendledger.settings import Settings
    from sendledger.usecases.callers import CallerAdmin
    from sendledger.usecases.webhooks import Webhook


LaneBuilder = Callable[["Settings", "LaneStores"], "list[EventLane]"]


def provider_lanes(settings: Settings, stores: LaneStores) -> list[EventLane]:
    """Each enabled provider's lanes, in the registry's order, then test mode's own (if configured)."""
    from sendledger.providers.simulated.outcomes import test_outcomes_lane

    slices = [slice_of(provider.value) for provider in settings.enabled_providers]
    lanes = [lane for piece in slices for lane in piece.lanes(settings, stores)]
    test_lane = test_outcomes_lane(settings, simulations(settings))  # test mode's events: their own path
    return lanes if test_lane is None else [*lanes, test_lane]


def escalation_queue(settings: Settings) -> EscalationQueue | None:
    from sendledger.adapters.sqs import SqsEscalationQueue

    return SqsEscalationQueue(settings.escalation_queue_url) if settings.escalation_queue_url else None


def simulated_carriers(settings: Settings, clock: Clock | None = None) -> SimulatedCarriers:
    """Test mode's carriers over this deployment's event paths (the simulated slice composes them)."""
    from sendledger.providers.simulated.compose import carriers_for

    return carriers_for(settings, simulations(settings), clock)


def simulations(settings: Settings) -> Callable[[str], Simulation]:
    """Each registered provider's simulation by its name, built on first ask (KeyError: no such provider)."""
    return cache(lambda name: slice_of(name).simulation(settings))


def build_caller_admin(
    caller_settings: CallerSettingsStore, settings: Settings, clock: Clock, sms_usage: SmsUsage | None = None
) -> CallerAdmin:
    from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver
    from sendledger.ports.sms_usage import SmsUsageInMemory
    from sendledger.usecases.callers import CallerAdmin

    return CallerAdmin(
        store=caller_settings,
        secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock),
        resolver=SocketResolver(),
        clock=clock,
        sms_usage=sms_usage if sms_usage is not None else SmsUsageInMemory(),
        sms_default_countries=settings.sms_default_countries,
        allow_loopback=settings.callback_allow_loopback,
    )


def feature_flags(settings: Settings, appconfig_client: object = None) -> FeatureFlags:
    """Powertools Feature Flags over the store `FLAGS_STORE` names, both cached `FLAGS_CACHE_SECONDS`."""
    from pathlib import Path

    from aws_lambda_powertools.utilities.feature_flags import AppConfigStore, StoreProvider

    from sendledger.adapters.feature_flags import COMMITTED_FLAGS, FileStore, PowertoolsFlags
    from sendledger.domain.messages import CATEGORIES
    from sendledger.settings import FlagStore, SettingsError

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


def other_email_senders(settings: Settings) -> dict[str, EmailSender]:
    """The senders of the email providers enabled beside the default, each built on its first send."""
    names = [provider.value for provider in settings.enabled_email_providers[1:]]
    return {name: on_first_use(partial(email_sender, settings, name)) for name in names}


@cache
def webhook(provider: str) -> Webhook | None:
    """The webhook function's container (handlers/webhooks.py): settings, the ledger's token items and
    a clock, no send path and no recipient key (an intake queues bodies; it reads no recipient)."""
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings

    settings = Settings.from_env()
    clock = SystemClock()
    return build_webhook(settings, clock, LedgerTable.named(settings.table_name, clock), provider)


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
