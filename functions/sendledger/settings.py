"""Settings: each one defined once (type, default, environment variable) for the Lambdas and CDK.

`Tunables` are chosen at synth time (CDK context keys of the same names, see infra/settings.py)
and reach every Lambda as the environment variables named in names.py; `Settings` adds the
wiring CDK or the local stack fills in. Read once per container with `Settings.from_env()`.
Plain pydantic: pydantic-settings is not a runtime dependency (it is only in the dev tree).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sendledger import names
from sendledger.domain.callers import TENANT_ID, configured_principal
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.provider import EmailProvider

__all__ = ["EmailProvider", "FlagStore", "Settings", "SettingsError", "Tunables"]

CATEGORIES = ("transactional", "alert", "security")
_CHOICES = tuple(choice.value for choice in StalePolicy)
_ALLOW = StalePolicy.ALLOW


class FlagStore(StrEnum):
    """Where the feature flags are read from (`FLAGS_STORE`)."""

    FILE = "file"  # a JSON file in the Powertools schema (the local stack, tests)
    APPCONFIG = "appconfig"  # the AppConfig profile CDK deploys (the deployed stack)


class SettingsError(ValueError):
    """A setting is invalid; the message names the environment variable or context key."""


def settings_error(exc: ValidationError) -> SettingsError:
    """One line per invalid value, each naming the key it was given under."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        given = f"={error['input']!r}" if error["type"] != "missing" else ""
        lines.append(f"{where}{given}: {error['msg']}")
    return SettingsError("invalid sendledger settings:\n  - " + "\n  - ".join(lines))


class Tunables(BaseModel):
    # By field name too: CDK context and tests use the names, the environment the aliases.
    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True, str_strip_whitespace=True)

    sender_email: str = Field("no-reply@example.com", validation_alias=names.ENV_SENDER_EMAIL)
    ingestion_mode: Literal["poll", "push"] = Field("poll", validation_alias=names.ENV_INGESTION_MODE)
    # The email transport; bootstrap builds its adapter, the stack its secrets and event path.
    email_provider: EmailProvider = Field(EmailProvider.SES, validation_alias=names.ENV_EMAIL_PROVIDER)
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
    # Signed callbacks: every status event is POSTed here when set (empty: no callbacks).
    callback_url: str = Field("", validation_alias=names.ENV_CALLBACK_URL)
    # Attempt n waits base * 2**(n-1) s; 6 attempts at 60 s span 31 minutes before the DLQ.
    callback_retry_base_seconds: int = Field(60, ge=0, le=3600, validation_alias=names.ENV_CALLBACK_RETRY_BASE_SECONDS)
    callback_max_attempts: int = Field(6, ge=1, le=20, validation_alias=names.ENV_CALLBACK_MAX_ATTEMPTS)
    callback_timeout_seconds: int = Field(10, ge=1, le=60, validation_alias=names.ENV_CALLBACK_TIMEOUT_SECONDS)
    # Mailgun: the sending domain, the API's base URL (US; EU is https://api.eu.mailgun.net),
    # how old Events API results must be to be final, and the webhook timestamps accepted.
    mailgun_domain: str = Field("", validation_alias=names.ENV_MAILGUN_DOMAIN)
    mailgun_api_base: str = Field("https://api.mailgun.net", validation_alias=names.ENV_MAILGUN_API_BASE)
    mailgun_events_final_after_seconds: int = Field(
        1800, ge=0, validation_alias=names.ENV_MAILGUN_EVENTS_FINAL_AFTER_SECONDS
    )
    mailgun_webhook_max_age_seconds: int = Field(300, ge=1, validation_alias=names.ENV_MAILGUN_WEBHOOK_MAX_AGE_SECONDS)
    # SendGrid: the API's base URL (the local stack points it at the simulator); whether the
    # account has Email Activity API access (a paid add-on) for unknown resolution; how old a
    # signed webhook's timestamp may be.
    sendgrid_api_base: str = Field("https://api.sendgrid.com", validation_alias=names.ENV_SENDGRID_API_BASE)
    sendgrid_email_activity: bool = Field(False, validation_alias=names.ENV_SENDGRID_EMAIL_ACTIVITY)
    sendgrid_webhook_max_age_seconds: int = Field(
        300, ge=1, validation_alias=names.ENV_SENDGRID_WEBHOOK_MAX_AGE_SECONDS
    )
    # IAM user, role, federated user or root ARNs, separated by spaces (or a JSON list), kept
    # normalised (no path; see domain/callers.py). Nobody is an admin unless named here.
    admin_principals: tuple[str, ...] = Field((), validation_alias=names.ENV_ADMIN_PRINCIPALS)
    # How long a container keeps the feature flags it read (either store) before reading again.
    flags_cache_seconds: int = Field(60, ge=1, le=3600, validation_alias=names.ENV_FLAGS_CACHE_SECONDS)
    # `<principal ARN>=<tenant id>` pairs separated by spaces (or a JSON object): those
    # principals are one caller, the tenant (keys, messages, exports, resets).
    caller_tenants: dict[str, str] = Field(default_factory=dict, validation_alias=names.ENV_CALLER_TENANTS)

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
            tenants[configured_principal(str(arn))] = tenant
        return tenants

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
        """The tunables as the Lambda environment (what `Settings.from_env` reads back)."""
        env = {}
        for name, info in Tunables.model_fields.items():
            value = getattr(self, name)
            if name == "stale_eligibility_policy":
                text = format_stale_policy(value)
            elif name == "admin_principals":
                text = " ".join(value)
            elif name == "caller_tenants":
                text = " ".join(f"{arn}={tenant}" for arn, tenant in value.items())
            else:
                text = str(value)
            env[_alias(name, info.validation_alias)] = text
        return env


class Settings(Tunables):
    table_name: str = Field("sendledger-ledger", validation_alias=names.ENV_LEDGER_TABLE)
    ses_configuration_set: str = Field("sendledger-events", validation_alias=names.ENV_SES_CONFIGURATION_SET)
    ses_events_queue_url: str = Field("", validation_alias=names.ENV_SES_EVENTS_QUEUE_URL)
    escalation_queue_url: str = Field("", validation_alias=names.ENV_ESCALATION_QUEUE_URL)
    sms_success_log_group: str = Field("", validation_alias=names.ENV_SMS_SUCCESS_LOG_GROUP)
    sms_failure_log_group: str = Field("", validation_alias=names.ENV_SMS_FAILURE_LOG_GROUP)
    # Key of recipient fingerprints; unset (local stack, tests): the fixed local-only key.
    fingerprint_secret_arn: str = Field("", validation_alias=names.ENV_FINGERPRINT_SECRET_ARN)
    local_principal: str | None = Field(None, validation_alias=names.ENV_LOCAL_PRINCIPAL)
    event_bus_name: str = Field(f"{names.EVENT_BUS_PREFIX}-local", validation_alias=names.ENV_EVENT_BUS_NAME)
    # Deployed the key comes from Secrets Manager (the ARN wins); the local stack uses the variable.
    callback_secret: str = Field("local-callback-secret", validation_alias=names.ENV_CALLBACK_SECRET)
    callback_secret_arn: str = Field("", validation_alias=names.ENV_CALLBACK_SECRET_ARN)
    # Mailgun's API key and webhook signing key (Secrets Manager); no signing key: no webhooks.
    mailgun_api_key_secret_arn: str = Field("", validation_alias=names.ENV_MAILGUN_API_KEY_SECRET_ARN)
    mailgun_signing_key_secret_arn: str = Field("", validation_alias=names.ENV_MAILGUN_SIGNING_KEY_SECRET_ARN)
    sendgrid_api_key_secret_arn: str = Field("", validation_alias=names.ENV_SENDGRID_API_KEY_SECRET_ARN)
    sendgrid_webhook_key_secret_arn: str = Field("", validation_alias=names.ENV_SENDGRID_WEBHOOK_KEY_SECRET_ARN)
    sendgrid_events_queue_url: str = Field("", validation_alias=names.ENV_SENDGRID_EVENTS_QUEUE_URL)
    # Feature flags: the committed file unless the stack points at its AppConfig profile.
    flags_store: FlagStore = Field(FlagStore.FILE, validation_alias=names.ENV_FLAGS_STORE)
    flags_file: str = Field("", validation_alias=names.ENV_FLAGS_FILE)
    flags_appconfig_application: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_APPLICATION)
    flags_appconfig_environment: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_ENVIRONMENT)
    flags_appconfig_profile: str = Field("", validation_alias=names.ENV_FLAGS_APPCONFIG_PROFILE)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Unset and empty variables take the default; an invalid one raises SettingsError naming it."""
        source = os.environ if env is None else env
        given = {}
        for name, info in cls.model_fields.items():
            var = _alias(name, info.validation_alias)
            if source.get(var):
                given[var] = source[var]
        try:
            return cls.model_validate(given)
        except ValidationError as exc:
            raise settings_error(exc) from None


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


def _check_choice(value: str) -> str:
    if value not in _CHOICES:
        raise ValueError(f"values are allow|defer, not {value!r}")
    return value


def _alias(name: str, alias: object) -> str:
    if not isinstance(alias, str):
        raise TypeError(f"setting {name} has no environment variable")
    return alias
