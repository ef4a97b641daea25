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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.domain.callers import CallerId
    from sendledger.domain.clock import Clock
    from sendledger.domain.flags import FlagValues
    from sendledger.ports.flags import FeatureFlags
    from sendledger.ports.ingestion import EventQueue
    from sendledger.ports.providers import EmailSender, ProviderEventsApi
    from sendledger.ports.status_out import CallbackEndpoint, CallbackRetries, StatusChangeSource, StatusEventBus
    from sendledger.settings import Settings
    from sendledger.usecases.context import Services
    from sendledger.usecases.ingest import Pipeline
    from sendledger.usecases.provider_webhooks import SendGridWebhook


@dataclass
class Runtime:
    """The send path's services, and the ingestion pipeline built on first use (the api never needs it)."""

    services: Services
    build_pipeline: Callable[[], Pipeline]
    _pipeline: Pipeline | None = field(default=None, init=False, repr=False)
    _sendgrid_webhook: SendGridWebhook | None = field(default=None, init=False, repr=False)

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = self.build_pipeline()
        return self._pipeline

    @property
    def sendgrid_webhook(self) -> SendGridWebhook:
        """What the webhook route needs, built on its first request (never on the send path)."""
        if self._sendgrid_webhook is None:
            self._sendgrid_webhook = build_sendgrid_webhook(self.services)
        return self._sendgrid_webhook

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
        email=email_sender(settings),
        sms=SnsSmsSender(),
        clock=SystemClock(),
        settings=settings,
        flags=FlagsOnFirstUse(lambda: feature_flags(settings)),
    )
    return Runtime.of(services, ledger)


class FlagsOnFirstUse:
    """The flags port, built by the first send: a Lambda that never decides a send (the SMS
    delivery logs, most poll cycles) never imports Powertools Feature Flags nor makes its client."""

    def __init__(self, build: Callable[[], FeatureFlags]) -> None:
        self._build = build
        self._built: FeatureFlags | None = None

    def values_for(self, caller: CallerId) -> FlagValues:
        if self._built is None:
            self._built = self._build()
        return self._built.values_for(caller)


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


def email_sender(settings: Settings) -> EmailSender:
    """The one adapter of the email port, chosen by `EMAIL_PROVIDER`."""
    from sendledger.domain.provider import EmailProvider
    from sendledger.settings import SettingsError

    builders: dict[EmailProvider, Callable[[Settings], EmailSender]] = {
        EmailProvider.SES: _ses_sender,
        EmailProvider.MAILGUN: _mailgun_sender,
        EmailProvider.SENDGRID: _sendgrid_sender,
    }
    builder = builders.get(settings.email_provider)
    if builder is None:
        raise SettingsError(f"EMAIL_PROVIDER={settings.email_provider.value}: no adapter in this build")
    return builder(settings)


def _ses_sender(settings: Settings) -> EmailSender:
    from sendledger.adapters.ses import SesEmailSender

    return SesEmailSender(settings.sender_email, settings.ses_configuration_set)


def _mailgun_sender(settings: Settings) -> EmailSender:
    from sendledger.adapters.mailgun import MailgunEmailSender
    from sendledger.adapters.mailgun_http import secret_value

    key = secret_value(settings.mailgun_api_key_secret_arn)
    return MailgunEmailSender(settings.mailgun_api_base, settings.mailgun_domain, settings.sender_email, key)


def mailgun_events_api(settings: Settings) -> ProviderEventsApi | None:
    from sendledger.adapters.mailgun_events import MailgunEventsApi
    from sendledger.adapters.mailgun_http import secret_value
    from sendledger.domain.provider import EmailProvider

    if settings.email_provider is not EmailProvider.MAILGUN:
        return None
    key = secret_value(settings.mailgun_api_key_secret_arn)
    return MailgunEventsApi(settings.mailgun_api_base, settings.mailgun_domain, key)


def mailgun_webhook_parts(settings: Settings, ledger: LedgerTable) -> dict[str, Any]:
    """The replay guard and the signing key, when Mailgun webhooks are enabled (a signing key set)."""
    from sendledger.adapters.mailgun_http import secret_value
    from sendledger.domain.provider import EmailProvider

    if settings.email_provider is not EmailProvider.MAILGUN or not settings.mailgun_signing_key_secret_arn:
        return {}
    return {
        "webhook_tokens": ledger.webhook_tokens,
        "mailgun_signing_key": secret_value(settings.mailgun_signing_key_secret_arn),
    }


def _sendgrid_sender(settings: Settings) -> EmailSender:
    from sendledger.adapters.sendgrid import SendGridEmailSender

    return SendGridEmailSender(settings.sender_email, settings.sendgrid_api_base, _sendgrid_api_key(settings))


def _sendgrid_api_key(settings: Settings) -> Callable[[], str]:
    from sendledger.adapters.secrets import provider_secret
    from sendledger.settings import SettingsError

    secret = settings.sendgrid_api_key_secret_arn
    if not secret:
        raise SettingsError("EMAIL_PROVIDER=sendgrid needs SENDGRID_API_KEY_SECRET_ARN")
    return lambda: provider_secret(secret)


def build_sendgrid_webhook(services: Services) -> SendGridWebhook:
    """Verifier and queue of the signed Event Webhook; unconfigured, every POST is refused."""
    from sendledger.adapters.secrets import provider_secret
    from sendledger.adapters.sendgrid_webhook import SendGridSignatureVerifier
    from sendledger.adapters.sqs_sink import SqsEventSink
    from sendledger.usecases.provider_webhooks import SendGridWebhook

    settings = services.settings
    key_secret, queue_url = settings.sendgrid_webhook_key_secret_arn, settings.sendgrid_events_queue_url
    return SendGridWebhook(
        verifier=SendGridSignatureVerifier(lambda: provider_secret(key_secret)) if key_secret else None,
        sink=SqsEventSink(queue_url) if queue_url else None,
        clock=services.clock,
        max_age_seconds=settings.sendgrid_webhook_max_age_seconds,
    )


def build_pipeline(services: Services, ledger: LedgerTable) -> Pipeline:
    """The ingestion stores share the ledger's DynamoDB client (one connection, one request count)."""
    from sendledger.adapters.cloudwatch_logs import CloudWatchLogReader
    from sendledger.adapters.sqs import SqsEscalationQueue, SqsEventQueue
    from sendledger.domain.events import EventSource
    from sendledger.domain.provider import EmailProvider
    from sendledger.usecases.ingest import Pipeline

    settings = services.settings
    logs = settings.sms_success_log_group or settings.sms_failure_log_group
    webhook_queues: dict[str, EventQueue] = {}
    if settings.sendgrid_events_queue_url:
        webhook_queues[EventSource.SENDGRID.value] = SqsEventQueue(settings.sendgrid_events_queue_url)
    lookup = None
    if settings.email_provider is EmailProvider.SENDGRID and settings.sendgrid_email_activity:
        from sendledger.adapters.sendgrid_activity import SendGridEmailActivity

        lookup = SendGridEmailActivity(settings.sendgrid_api_base, _sendgrid_api_key(settings))
    return Pipeline(
        services=services,
        events=ledger.events,
        due_work=ledger.due_work,
        escalation_timers=ledger.escalation_timers,
        ses_queue=SqsEventQueue(settings.ses_events_queue_url) if settings.ses_events_queue_url else None,
        logs=CloudWatchLogReader() if logs else None,
        escalations=SqsEscalationQueue(settings.escalation_queue_url) if settings.escalation_queue_url else None,
        mailgun_events=mailgun_events_api(settings),
        **mailgun_webhook_parts(settings, ledger),
        webhook_queues=webhook_queues,
        acceptance_lookup=lookup,
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
    # The longest a `retries` call can take: with the POST's timeout, one record's time budget.
    retry_call_seconds: float = 0


@cache
def status_out() -> StatusOut:
    return build_status_out()


def build_status_out(settings: Settings | None = None, client: object = None) -> StatusOut:
    from sendledger.adapters.callbacks_http import UrllibEndpoint, callback_secret
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.adapters.eventbridge import EventBridgeBus
    from sendledger.adapters.sqs_visibility import CALL_SECONDS, SqsVisibility
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
        retry_call_seconds=CALL_SECONDS,
    )
