"""Settings: each one defined once (type, default, environment variable) for the Lambdas and CDK.

`Tunables` are chosen at synth time (CDK context keys of the same names, see infra/settings.py)
and reach every Lambda as the environment variables named in names.py; `Settings` adds the
wiring CDK or the local stack fills in. Each provider's own settings are a `Fragment` in its
slice (providers/<name>/settings.py), read from the same flat environment (its context keys are
its variables in lower case). Read once per container with `Settings.from_env()`.
Declared with settings_schema.py, not pydantic: every Lambda reads them at cold start. The text
forms of the settings that hold more than one value (lists, maps, tables) are settings_forms.py.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self, TypeVar

from sendledger import names
from sendledger import settings_forms as forms
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.messages import CATEGORIES
from sendledger.domain.provider import Provider
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_guardrails import CountryRule, RuleMode, country_of
from sendledger.domain.sms_timing import SMS_TIMING_DEFAULTS, CountryTiming, timing_for
from sendledger.fragment import Fragment
from sendledger.providers.infrai.settings import InfraiSettings
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.sendgrid.settings import SendGridSettings
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.sns.settings import SnsSettings
from sendledger.settings_schema import Declared, SettingsError, optional_text, setting

__all__ = ["FlagStore", "Fragment", "IngestionMode", "Provider", "Settings", "SettingsError", "Tunables"]

F = TypeVar("F", bound="Fragment")
# Each provider's settings, declared in its slice (providers/<name>/settings.py); gathered here,
# the one module besides the domain's registry that names them all.
FRAGMENTS: Mapping[Provider, type[Fragment]] = {
    fragment.PROVIDER: fragment
    for fragment in (SesSettings, SnsSettings, SendGridSettings, MailgunSettings, InfraiSettings)
}


def fragment_of(provider: str) -> type[Fragment]:
    """The settings fragment class of a registered provider."""
    return FRAGMENTS[Provider(provider)]


class FlagStore(StrEnum):
    """Where the feature flags are read from (`FLAGS_STORE`)."""

    FILE = "file"  # a JSON file in the Powertools schema (the local stack, tests)
    APPCONFIG = "appconfig"  # the AppConfig profile CDK deploys (the deployed stack)


class IngestionMode(StrEnum):
    """How provider events reach the ledger (`INGESTION_MODE`)."""

    POLL = "poll"  # the poller reads every source on its schedule
    PUSH = "push"  # queues trigger their lanes; the poller still resolves unknowns


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tunables(Declared):
    # Built from field names (CDK context, tests) or environment variables (a Lambda).
    sender_email: str = setting("no-reply@example.com", env=names.ENV_SENDER_EMAIL)
    ingestion_mode: IngestionMode = setting(IngestionMode.POLL, env=names.ENV_INGESTION_MODE)
    # The default email transport; bootstrap builds its adapter, the stack its resources. More
    # may be enabled beside it (each message records the one that carried it), and SMS has its own.
    email_provider: Provider = setting(
        Provider.SES, env=names.ENV_EMAIL_PROVIDER, parse=forms.carrier_of(Channel.EMAIL)
    )
    email_providers: frozenset[Provider] = setting(
        frozenset(), env=names.ENV_EMAIL_PROVIDERS, parse=forms.email_providers, show=forms.show_providers
    )
    sms_provider: Provider = setting(Provider.SNS, env=names.ENV_SMS_PROVIDER, parse=forms.carrier_of(Channel.SMS))
    # The countries a caller without an `sms_countries` rule of its own may text (empty: every
    # one). Set it: SMS pumping targets the ranges nobody meant to reach (docs/sms-guardrails.md).
    sms_allowed_countries: frozenset[str] = setting(
        frozenset(), env=names.ENV_SMS_ALLOWED_COUNTRIES, parse=forms.countries, show=forms.show_countries
    )
    # SMS status pull interval and default escalation deadline by destination country: the rows
    # given replace the shipped table's of the same country (`default`: every other country).
    sms_country_timing: dict[str, CountryTiming] = setting(
        factory=lambda: dict(SMS_TIMING_DEFAULTS),
        env=names.ENV_SMS_COUNTRY_TIMING,
        parse=forms.country_timing,
        show=forms.show_timing,
    )
    poll_interval_seconds: int = setting(60, env=names.ENV_POLL_INTERVAL_SECONDS, ge=0)
    # Events one poll applies in parallel; synthesis checks the stated peak rate drains with it.
    poll_apply_concurrency: int = setting(8, env=names.ENV_POLL_APPLY_CONCURRENCY, ge=1)
    reset_window_seconds: int = setting(600, env=names.ENV_RESET_WINDOW_SECONDS, ge=0)
    reset_max_failed_attempts: int = setting(5, env=names.ENV_RESET_MAX_FAILED_ATTEMPTS, ge=0)
    reset_url_template: str = setting("https://app.example.com/reset?token={token}", env=names.ENV_RESET_URL_TEMPLATE)
    unknown_grace_seconds: int = setting(900, env=names.ENV_UNKNOWN_GRACE_SECONDS, ge=0)
    unknown_max_age_seconds: int = setting(86_400, env=names.ENV_UNKNOWN_MAX_AGE_SECONDS, ge=0)
    # `allow`, `defer`, or per category `security=defer,alert=allow` (unnamed categories allow).
    stale_eligibility_policy: dict[str, StalePolicy] = setting(
        factory=lambda: dict.fromkeys(CATEGORIES, StalePolicy.ALLOW),
        env=names.ENV_STALE_ELIGIBILITY_POLICY,
        parse=forms.stale_policy,
        show=forms.format_stale_policy,
    )
    idempotency_retention_days: int = setting(30, env=names.ENV_IDEMPOTENCY_RETENTION_DAYS, ge=0)
    transient_bounce_limit: int = setting(3, env=names.ENV_TRANSIENT_BOUNCE_LIMIT, ge=0)
    transient_bounce_window_days: int = setting(7, env=names.ENV_TRANSIENT_BOUNCE_WINDOW_DAYS, ge=0)
    # Signed callbacks go to each caller's own URL (caller settings, set through the admin routes).
    # Attempt n waits base * 2**(n-1) s; 6 attempts at 60 s span 31 minutes before the DLQ.
    callback_retry_base_seconds: int = setting(60, env=names.ENV_CALLBACK_RETRY_BASE_SECONDS, ge=0, le=3600)
    callback_max_attempts: int = setting(6, env=names.ENV_CALLBACK_MAX_ATTEMPTS, ge=1, le=20)
    callback_timeout_seconds: int = setting(10, env=names.ENV_CALLBACK_TIMEOUT_SECONDS, ge=1, le=60)
    # IAM user, role or root ARNs, separated by spaces (or a JSON list), kept normalised (no
    # path; see domain/callers.py); a federated user is refused. Nobody is an admin unless named here.
    admin_principals: tuple[str, ...] = setting((), env=names.ENV_ADMIN_PRINCIPALS, parse=forms.admins, show=" ".join)
    # How long a container keeps the feature flags it read (either store) before reading again.
    flags_cache_seconds: int = setting(60, env=names.ENV_FLAGS_CACHE_SECONDS, ge=1, le=3600)
    # A template version never changes, so a container keeps the words it read (an LRU of this
    # many); what it read of a caller's version (retired? its own at all?) and of its reset mail
    # is read again after TEMPLATE_CACHE_SECONDS, so a retirement or a caller's version shadowing
    # the deployment's reaches a warm container then (docs/templates.md).
    template_cache_seconds: int = setting(300, env=names.ENV_TEMPLATE_CACHE_SECONDS, ge=1, le=3600)
    template_cache_size: int = setting(512, env=names.ENV_TEMPLATE_CACHE_SIZE, ge=1, le=100_000)
    # `<principal ARN>=<tenant id>` pairs separated by spaces (or a JSON object): those
    # principals are one caller, the tenant (keys, messages, exports, resets). The only place a
    # federated user's ARN is accepted: naming one is accepting that anyone who may call
    # sts:GetFederationToken with that name is that tenant (docs/api.md#callers).
    caller_tenants: dict[str, str] = setting(
        factory=dict, env=names.ENV_CALLER_TENANTS, parse=forms.tenants, show=forms.show_tenants
    )
    # Conformance runs against a real provider: drop the answer of an accepted send to a
    # `+timeout-accepted` address (providers/injected.py). Never on a stage real callers use.
    inject_timeouts: bool = setting(False, env=names.ENV_INJECT_TIMEOUTS)
    # Each provider's own settings (its slice's Fragment), by provider name.
    providers: Mapping[str, Fragment] = setting(factory=dict, parse=forms.fragments)

    def sms_timing(self, number: str) -> CountryTiming:
        """The timing of an SMS to `number` (E.164), by its country (the default row's for a
        country the table does not list, and for text that is no number: the send refuses it)."""
        return timing_for(self.sms_country_timing, country_of(number))

    @property
    def sms_default_countries(self) -> CountryRule | None:
        """The deployment's country rule (None: every country)."""
        return CountryRule(RuleMode.ALLOW, self.sms_allowed_countries) if self.sms_allowed_countries else None

    @property
    def enabled_email_providers(self) -> list[Provider]:
        """The default first, then the others enabled beside it, in registry order."""
        return [self.email_provider, *(p for p in Provider if p in self.email_providers and p != self.email_provider)]

    @property
    def enabled_providers(self) -> list[Provider]:
        """Every provider this deployment sends through: what it builds, polls and deploys."""
        enabled = [*self.enabled_email_providers, self.sms_provider]
        return [provider for index, provider in enumerate(enabled) if provider not in enabled[:index]]

    def carries(self, provider: str, channel: Channel) -> bool:
        """Whether `provider` is enabled here for `channel` (a message's provider may have been disabled since)."""
        if channel is Channel.SMS:
            return provider == self.sms_provider
        return provider in self.enabled_email_providers

    def status_interval_seconds(self, provider: str) -> int | None:
        """How often an accepted message of `provider` is asked for its status (None: never, its
        events come by themselves)."""
        return self.provider(fragment_of(provider)).status_interval()

    def status_interval_for(self, provider: str, channel: Channel, to: str) -> int | None:
        """How often one accepted message is asked for its status: an SMS by its destination
        country (sms_country_timing), an email at the provider's own interval; None: never."""
        interval = self.status_interval_seconds(provider)
        if interval is None or channel is not Channel.SMS:
            return interval
        return self.sms_timing(to).status_interval_seconds

    def longest_status_interval(self, provider: str) -> int | None:
        """The longest a message of `provider` waits between two asks (its lane's watermark lags so much)."""
        interval = self.status_interval_seconds(provider)
        if interval is None or not self.carries(provider, Channel.SMS):
            return interval
        return max(interval, *(row.status_interval_seconds for row in self.sms_country_timing.values()))

    def provider(self, kind: type[F]) -> F:
        """A provider's settings fragment (its defaults when none was read)."""
        found = self.providers.get(kind.PROVIDER.value)
        return found if isinstance(found, kind) else kind()

    def with_provider(self, fragment: Fragment) -> Self:
        """A copy with one provider's settings replaced."""
        return self.replace({"providers": {**self.providers, fragment.PROVIDER.value: fragment}})

    def configure_provider(self, kind: type[Fragment], **changes: Any) -> Self:
        """A copy with some of one provider's settings changed (validated)."""
        current = self.provider(kind)
        return self.with_provider(kind.from_values({**current.values(), **changes}))

    def environment(self) -> dict[str, str]:
        """The tunables as the Lambda environment (what `Settings.from_env` reads back), the
        enabled providers' included."""
        env = self.environment_of(name for name in Tunables.rules() if name != "providers")
        for provider in self.enabled_providers:
            env.update(self.provider(fragment_of(provider.value)).environment())
        return env


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(Tunables):
    table_name: str = setting("sendledger-ledger", env=names.ENV_LEDGER_TABLE)
    escalation_queue_url: str = setting("", env=names.ENV_ESCALATION_QUEUE_URL)
    # Test mode's own event path: never a provider's queue or log group (outlets.py).
    test_outcomes_queue_url: str = setting("", env=names.ENV_TEST_OUTCOMES_QUEUE_URL)
    # Key of recipient fingerprints; unset (local stack, tests): the fixed local-only key.
    fingerprint_secret_arn: str = setting("", env=names.ENV_FINGERPRINT_SECRET_ARN)
    local_principal: str | None = setting(None, env=names.ENV_LOCAL_PRINCIPAL, parse=optional_text)
    event_bus_name: str = setting(f"{names.EVENT_BUS_PREFIX}-local", env=names.ENV_EVENT_BUS_NAME)
    # Each caller's callback secret is the Secrets Manager secret `<prefix><caller id>` (CDK: per stage).
    callback_secret_prefix: str = setting(
        names.CALLBACK_SECRETS_PATH.format(stage="local"), env=names.ENV_CALLBACK_SECRET_PREFIX
    )
    # Callbacks to loopback addresses, and plain http to them: the local stack's receiver. Set by
    # the local stack alone; never by CDK (callback URLs are https to public addresses deployed).
    callback_allow_loopback: bool = setting(False, env=names.ENV_CALLBACK_ALLOW_LOOPBACK)
    # Feature flags: the committed file unless the stack points at its AppConfig profile.
    # The deployment's templates (`<id>/<version>.json`): the folder CDK context `templates_dir`
    # bundled into the asset; empty: the ones shipped in functions/sendledger/templates/.
    templates_dir: str = setting("", env=names.ENV_TEMPLATES_DIR)
    flags_store: FlagStore = setting(FlagStore.FILE, env=names.ENV_FLAGS_STORE)
    flags_file: str = setting("", env=names.ENV_FLAGS_FILE)
    flags_appconfig_application: str = setting("", env=names.ENV_FLAGS_APPCONFIG_APPLICATION)
    flags_appconfig_environment: str = setting("", env=names.ENV_FLAGS_APPCONFIG_ENVIRONMENT)
    flags_appconfig_profile: str = setting("", env=names.ENV_FLAGS_APPCONFIG_PROFILE)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Unset and empty variables take the default; an invalid one raises SettingsError naming it."""
        source = os.environ if env is None else env
        given = {rule.env: source[rule.env] for rule in cls.rules().values() if rule.env and source.get(rule.env)}
        problems: list[str] = []
        fragments: dict[str, Fragment] = {}
        for provider in Provider:
            fragment = fragment_of(provider.value)
            if not any(source.get(fragment.variable(name)) for name in fragment.rules()):
                continue  # all defaults: `provider()` answers them
            try:
                fragments[provider.value] = fragment.from_env(source)
            except SettingsError as exc:
                problems += exc.problems
        try:
            settings = cls.from_values({**given, "providers": fragments})
        except SettingsError as exc:
            problems = exc.problems + problems
        if problems:
            raise SettingsError.listing(problems)
        return settings
