"""Settings: each one defined once (type, default, environment variable) for the Lambdas and CDK.

`Tunables` are chosen at synth time (CDK context keys of the same names, see infra/settings.py)
and reach every Lambda as the environment variables named in names.py; `Settings` adds the
wiring CDK or the local stack fills in. Each provider's own settings are a `Fragment` in its
slice (providers/<name>/settings.py), read from the same flat environment (its context keys are
its variables in lower case). Read once per container with `Settings.from_env()`.
Plain pydantic: pydantic-settings is not a runtime dependency (it is only in the dev tree).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sendledger import names
from sendledger.domain.callers import TENANT_ID, configured_principal
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.provider import Provider, carriers, channels_of
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_guardrails import CountryRule, RuleMode, country_of, country_problems
from sendledger.domain.sms_timing import DEFAULT_ROW, SMS_TIMING_DEFAULTS, CountryTiming, timing_for
from sendledger.fragment import CONFIG, Fragment
from sendledger.fragment import alias as _alias
from sendledger.providers.infrai.settings import InfraiSettings
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.sendgrid.settings import SendGridSettings
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.sns.settings import SnsSettings

__all__ = ["FlagStore", "Fragment", "Provider", "Settings", "SettingsError", "Tunables"]

CATEGORIES = ("transactional", "alert", "security")
_CHOICES = tuple(choice.value for choice in StalePolicy)
_ALLOW = StalePolicy.ALLOW
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


class SettingsError(ValueError):
    """A setting is invalid; the message names the environment variable or context key."""


def settings_error(exc: ValidationError) -> SettingsError:
    """One line per invalid value, each naming the key it was given under."""
    return SettingsError("invalid sendledger settings:\n  - " + "\n  - ".join(_error_lines(exc)))


def _error_lines(exc: ValidationError) -> list[str]:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        given = f"={error['input']!r}" if error["type"] != "missing" else ""
        lines.append(f"{where}{given}: {error['msg']}")
    return lines


class Tunables(BaseModel):
    # By field name too: CDK context and tests use the names, the environment the aliases.
    # Validators built on first use, the subclasses' included: a Lambda validates only `Settings`
    # (built by its one read, at the composition root), never this base, whose build it would pay too.
    model_config = ConfigDict(**CONFIG, defer_build=True)

    sender_email: str = Field("no-reply@example.com", validation_alias=names.ENV_SENDER_EMAIL)
    ingestion_mode: Literal["poll", "push"] = Field("poll", validation_alias=names.ENV_INGESTION_MODE)
    # The default email transport; bootstrap builds its adapter, the stack its resources. More
    # may be enabled beside it (each message records the one that carried it), and SMS has its own.
    email_provider: Provider = Field(Provider.SES, validation_alias=names.ENV_EMAIL_PROVIDER)
    email_providers: frozenset[Provider] = Field(frozenset(), validation_alias=names.ENV_EMAIL_PROVIDERS)
    sms_provider: Provider = Field(Provider.SNS, validation_alias=names.ENV_SMS_PROVIDER)
    # The countries a caller without an `sms_countries` rule of its own may text (empty: every
    # one). Set it: SMS pumping targets the ranges nobody meant to reach (docs/sms-guardrails.md).
    sms_allowed_countries: frozenset[str] = Field(frozenset(), validation_alias=names.ENV_SMS_ALLOWED_COUNTRIES)
    # SMS status pull interval and default escalation deadline by destination country: the rows
    # given replace the shipped table's of the same country (`default`: every other country).
    sms_country_timing: dict[str, CountryTiming] = Field(
        default_factory=lambda: dict(SMS_TIMING_DEFAULTS), validation_alias=names.ENV_SMS_COUNTRY_TIMING
    )
    poll_interval_seconds: int = Field(60, ge=0, validation_alias=names.ENV_POLL_INTERVAL_SECONDS)
    # Events one poll applies in parallel; synthesis checks the stated peak rate drains with it.
    poll_apply_concurrency: int = Field(8, ge=1, validation_alias=names.ENV_POLL_APPLY_CONCURRENCY)
    reset_window_seconds: int = Field(600, ge=0, validation_alias=names.ENV_RESET_WINDOW_SECONDS)
    reset_max_failed_attempts: int = Field(5, ge=0, validation_alias=names.ENV_RESET_MAX_FAILED_ATTEMPTS)
    reset_url_template: str = Field(
        "https://app.example.com/reset?token={token}", validation_alias=names.ENV_RESET_URL_TEMPLATE
    )
    unknown_grace_seconds: int = Field(900, ge=0, validation_alias=names.ENV_UNKNOWN_GRACE_SECONDS)
    unknown_max_age_seconds: int = Field(86_400, ge=0, validation_alias=names.ENV_UNKNOWN_MAX_AGE_SECONDS)
    # `allow`, `defer`, or per category `security=defer,alert=allow` (unnamed categories allow).
    stale_eligibility_policy: dict[str, StalePolicy] = Field(
        default_factory=lambda: dict.fromkeys(CATEGORIES, _ALLOW),
        validation_alias=names.ENV_STALE_ELIGIBILITY_POLICY,
    )
    idempotency_retention_days: int = Field(30, ge=0, validation_alias=names.ENV_IDEMPOTENCY_RETENTION_DAYS)
    transient_bounce_limit: int = Field(3, ge=0, validation_alias=names.ENV_TRANSIENT_BOUNCE_LIMIT)
    transient_bounce_window_days: int = Field(7, ge=0, validation_alias=names.ENV_TRANSIENT_BOUNCE_WINDOW_DAYS)
    # Signed callbacks go to each caller's own URL (caller settings, set through the admin routes).
    # Attempt n waits base * 2**(n-1) s; 6 attempts at 60 s span 31 minutes before the DLQ.
    callback_retry_base_seconds: int = Field(60, ge=0, le=3600, validation_alias=names.ENV_CALLBACK_RETRY_BASE_SECONDS)
    callback_max_attempts: int = Field(6, ge=1, le=20, validation_alias=names.ENV_CALLBACK_MAX_ATTEMPTS)
    callback_timeout_seconds: int = Field(10, ge=1, le=60, validation_alias=names.ENV_CALLBACK_TIMEOUT_SECONDS)
    # IAM user, role or root ARNs, separated by spaces (or a JSON list), kept normalised (no
    # path; see domain/callers.py); a federated user is refused. Nobody is an admin unless named here.
    admin_principals: tuple[str, ...] = Field((), validation_alias=names.ENV_ADMIN_PRINCIPALS)
    # How long a container keeps the feature flags it read (either store) before reading again.
    flags_cache_seconds: int = Field(60, ge=1, le=3600, validation_alias=names.ENV_FLAGS_CACHE_SECONDS)
    # A template version never changes, so a container keeps the words it read (an LRU of this
    # many); what it read of a caller's version (retired? its own at all?) and of its reset mail
    # is read again after TEMPLATE_CACHE_SECONDS, so a retirement or a caller's version shadowing
    # the deployment's reaches a warm container then (docs/templates.md).
    template_cache_seconds: int = Field(300, ge=1, le=3600, validation_alias=names.ENV_TEMPLATE_CACHE_SECONDS)
    template_cache_size: int = Field(512, ge=1, le=100_000, validation_alias=names.ENV_TEMPLATE_CACHE_SIZE)
    # `<principal ARN>=<tenant id>` pairs separated by spaces (or a JSON object): those
    # principals are one caller, the tenant (keys, messages, exports, resets). The only place a
    # federated user's ARN is accepted: naming one is accepting that anyone who may call
    # sts:GetFederationToken with that name is that tenant (docs/api.md#callers).
    caller_tenants: dict[str, str] = Field(default_factory=dict, validation_alias=names.ENV_CALLER_TENANTS)
    # Conformance runs against a real provider: drop the answer of an accepted send to a
    # `+timeout-accepted` address (providers/injected.py). Never on a stage real callers use.
    inject_timeouts: bool = Field(False, validation_alias=names.ENV_INJECT_TIMEOUTS)
    # Each provider's own settings (its slice's Fragment), by provider name.
    providers: Mapping[str, Fragment] = Field(default_factory=dict, exclude=True)

    @field_validator("admin_principals", mode="before")
    @classmethod
    def _admins(cls, raw: Any) -> Any:
        listed = _json_or(raw, str.split)
        if not isinstance(listed, list | tuple):
            return listed
        return tuple(dict.fromkeys(configured_principal(str(arn)) for arn in listed))

    @field_validator("caller_tenants", mode="before")
    @classmethod
    def _tenants(cls, raw: Any) -> Any:
        pairs = _json_or(raw, _tenant_pairs)
        if not isinstance(pairs, Mapping):
            return pairs
        tenants = {}
        for arn, tenant in pairs.items():
            if not (isinstance(tenant, str) and TENANT_ID.fullmatch(tenant)):
                raise ValueError(f"tenant of {arn!r} must match {TENANT_ID.pattern}, not {tenant!r}")
            # A federated user's ARN here is the deployer's opt-in (docs/api.md#callers)
            tenants[configured_principal(str(arn), federated_allowed=True)] = tenant
        return tenants

    @field_validator("email_provider")
    @classmethod
    def _carries_email(cls, provider: Provider) -> Provider:
        return _carrier(provider, Channel.EMAIL)

    @field_validator("sms_provider")
    @classmethod
    def _carries_sms(cls, provider: Provider) -> Provider:
        return _carrier(provider, Channel.SMS)

    @field_validator("email_providers", mode="before")
    @classmethod
    def _provider_list(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            raw = [part.strip() for part in raw.split(",") if part.strip()]
        if isinstance(raw, Iterable) and not isinstance(raw, str):
            return frozenset(_carrier(Provider(str(part)), Channel.EMAIL) for part in raw)
        return raw

    @field_validator("sms_allowed_countries", mode="before")
    @classmethod
    def _countries(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            raw = [part.strip() for part in raw.split(",") if part.strip()]
        if isinstance(raw, Iterable) and not isinstance(raw, str):
            codes = [str(code).upper() for code in raw]
            problems = country_problems(codes)
            if problems:
                raise ValueError("; ".join(problems))
            return frozenset(codes)
        return raw

    @field_validator("sms_country_timing", mode="before")
    @classmethod
    def _timing(cls, raw: Any) -> Any:
        rows = _json_or(raw, json.loads)
        if not isinstance(rows, Mapping):
            return rows
        for country in rows:
            if (country != DEFAULT_ROW and country_problems([country])) or country != country.strip():
                raise ValueError(f"{country!r} is neither an ISO 3166 alpha-2 code nor {DEFAULT_ROW!r}")
        merged: dict[str, Any] = {name: vars(row) for name, row in SMS_TIMING_DEFAULTS.items()}
        for country, row in rows.items():
            given = row if isinstance(row, Mapping) else vars(row)
            for name, seconds in given.items():
                if name not in CountryTiming.__dataclass_fields__ or not isinstance(seconds, int) or seconds < 1:
                    raise ValueError(f"{country}.{name}: a whole number of seconds, at least 1, of a CountryTiming")
            key = country if country == DEFAULT_ROW else country.upper()
            merged[key] = {**merged.get(key, merged[DEFAULT_ROW]), **given}
        return merged

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
        return self.model_copy(update={"providers": {**self.providers, fragment.PROVIDER.value: fragment}})

    def configure_provider(self, kind: type[Fragment], **changes: Any) -> Self:
        """A copy with some of one provider's settings changed (validated)."""
        current = self.provider(kind)
        return self.with_provider(kind.model_validate({**current.model_dump(), **changes}))

    @field_validator("stale_eligibility_policy", mode="before")
    @classmethod
    def _stale_policy(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            return parse_stale_policy(raw)
        if isinstance(raw, Mapping):
            unknown = set(raw) - set(CATEGORIES)
            if unknown:
                raise ValueError(f"unknown categories {sorted(unknown)} (categories: {', '.join(CATEGORIES)})")
            return {**dict.fromkeys(CATEGORIES, _ALLOW), **raw}
        return raw

    def environment(self) -> dict[str, str]:
        """The tunables as the Lambda environment (what `Settings.from_env` reads back), the
        enabled providers' included."""
        env = {}
        for name, info in Tunables.model_fields.items():
            value = getattr(self, name)
            if name == "providers":
                continue
            if name == "stale_eligibility_policy":
                env[_alias(name, info.validation_alias)] = format_stale_policy(value)
            elif name == "email_providers":
                env[_alias(name, info.validation_alias)] = ",".join(p.value for p in Provider if p in value)
            elif name == "sms_allowed_countries":
                env[_alias(name, info.validation_alias)] = ",".join(sorted(value))
            elif name == "sms_country_timing":
                rows = {country: vars(row) for country, row in sorted(value.items())}
                env[_alias(name, info.validation_alias)] = json.dumps(rows, separators=(",", ":"))
            elif name == "admin_principals":
                env[_alias(name, info.validation_alias)] = " ".join(value)
            elif name == "caller_tenants":
                env[_alias(name, info.validation_alias)] = " ".join(f"{arn}={tenant}" for arn, tenant in value.items())
            else:
                env[_alias(name, info.validation_alias)] = str(value)
        for provider in self.enabled_providers:
            env.update(self.provider(fragment_of(provider.value)).environment())
        return env


class Settings(Tunables):
    table_name: str = Field("sendledger-ledger", validation_alias=names.ENV_LEDGER_TABLE)
    escalation_queue_url: str = Field("", validation_alias=names.ENV_ESCALATION_QUEUE_URL)
    # Test mode's own event path: never a provider's queue or log group (outlets.py).
    test_outcomes_queue_url: str = Field("", validation_alias=names.ENV_TEST_OUTCOMES_QUEUE_URL)
    # Key of recipient fingerprints; unset (local stack, tests): the fixed local-only key.
    fingerprint_secret_arn: str = Field("", validation_alias=names.ENV_FINGERPRINT_SECRET_ARN)
    local_principal: str | None = Field(None, validation_alias=names.ENV_LOCAL_PRINCIPAL)
    event_bus_name: str = Field(f"{names.EVENT_BUS_PREFIX}-local", validation_alias=names.ENV_EVENT_BUS_NAME)
    # Each caller's callback secret is the Secrets Manager secret `<prefix><caller id>` (CDK: per stage).
    callback_secret_prefix: str = Field(
        names.CALLBACK_SECRETS_PATH.format(stage="local"), validation_alias=names.ENV_CALLBACK_SECRET_PREFIX
    )
    # Callbacks to loopback addresses, and plain http to them: the local stack's receiver. Set by
    # the local stack alone; never by CDK (callback URLs are https to public addresses deployed).
    callback_allow_loopback: bool = Field(False, validation_alias=names.ENV_CALLBACK_ALLOW_LOOPBACK)
    # Feature flags: the committed file unless the stack points at its AppConfig profile.
    # The deployment's templates (`<id>/<version>.json`): the folder CDK context `templates_dir`
    # bundled into the asset; empty: the ones shipped in functions/sendledger/templates/.
    templates_dir: str = Field("", validation_alias=names.ENV_TEMPLATES_DIR)
    flags_store: FlagStore = Field(FlagStore.FILE, validation_alias=names.ENV_FLAGS_STORE)
    flags_file: str = Field("", validation_alias=names.ENV_FLAGS_FILE)
    flags_appconfig_application: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_APPLICATION)
    flags_appconfig_environment: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_ENVIRONMENT)
    flags_appconfig_profile: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_PROFILE)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Unset and empty variables take the default; an invalid one raises SettingsError naming it."""
        source = os.environ if env is None else env
        given: dict[str, Any] = {}
        for name, info in cls.model_fields.items():
            if name == "providers":
                continue
            var = _alias(name, info.validation_alias)
            if source.get(var):
                given[var] = source[var]
        errors: list[str] = []
        fragments: dict[str, Fragment] = {}
        for provider in Provider:
            fragment = fragment_of(provider.value)
            if not any(source.get(fragment.variable(name)) for name in fragment.model_fields):
                continue  # all defaults: `provider()` answers them
            try:
                fragments[provider.value] = fragment.from_env(source)
            except ValidationError as exc:
                errors += _error_lines(exc)
        try:
            settings = cls.model_validate({**given, "providers": fragments})
        except ValidationError as exc:
            errors = _error_lines(exc) + errors
        if errors:
            raise SettingsError("invalid sendledger settings:\n  - " + "\n  - ".join(errors))
        return settings


def parse_stale_policy(raw: str) -> dict[str, str]:
    """`allow`, `defer`, or per category: `transactional=allow,security=defer`."""
    policy = dict.fromkeys(CATEGORIES, "allow")
    raw = raw.strip()
    if not raw:
        return policy
    if "=" not in raw:
        return dict.fromkeys(CATEGORIES, _check_choice(raw))
    for part in raw.split(","):
        category, _, value = part.partition("=")
        if category.strip() not in CATEGORIES:
            raise ValueError(f"unknown category {category.strip()!r} (categories: {', '.join(CATEGORIES)})")
        policy[category.strip()] = _check_choice(value.strip())
    return policy


def format_stale_policy(policy: Mapping[str, str]) -> str:
    """The inverse of parse_stale_policy, in its shortest form."""
    choices = {policy.get(category, "allow") for category in CATEGORIES}
    if len(choices) == 1:
        return choices.pop()
    return ",".join(f"{category}={policy.get(category, 'allow')}" for category in CATEGORIES)


def _carrier(provider: Provider, channel: Channel) -> Provider:
    if channel not in channels_of(provider.value):
        others = ", ".join(p.value for p in carriers(channel))
        raise ValueError(f"{provider.value} does not carry {channel.value} (providers that do: {others})")
    return provider


def _check_choice(value: str) -> str:
    if value not in _CHOICES:
        raise ValueError(f"values are allow|defer, not {value!r}")
    return value


def _tenant_pairs(text: str) -> dict[str, str]:
    pairs = {}
    for entry in text.split():
        arn, equals, tenant = entry.rpartition("=")  # a role name may contain "=", a tenant id not
        if not (arn and equals):
            raise ValueError(f"{entry[:200]!r} is not <principal ARN>=<tenant id>")
        pairs[arn] = tenant
    return pairs


def _json_or(raw: Any, parse_text: Callable[[str], Any]) -> Any:
    """A JSON list or object as given (CDK context, or a variable starting with [ or {), else
    `parse_text` of the plain form. IAM names may contain `,` and `=`, never a space."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if text.startswith(("[", "{")):
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError("not valid JSON") from None
    return parse_text(text)
