"""Runtime settings, read once per container from the environment (names in names.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sendledger import names

CATEGORIES = ("transactional", "alert", "security")


@dataclass(frozen=True)
class Settings:
    table_name: str = "sendledger-ledger"
    sender_email: str = "no-reply@example.com"
    ses_configuration_set: str = "sendledger-events"
    ses_events_queue_url: str = ""
    escalation_queue_url: str = ""
    sms_success_log_group: str = ""
    sms_failure_log_group: str = ""
    ingestion_mode: str = "poll"
    poll_interval_seconds: int = 60
    reset_window_seconds: int = 600
    reset_max_failed_attempts: int = 5
    reset_url_template: str = "https://app.example.com/reset?token={token}"
    unknown_grace_seconds: int = 900
    unknown_max_age_seconds: int = 86_400
    stale_policy: dict[str, str] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, "allow"))
    idempotency_retention_days: int = 30
    suppression_lag_slo_seconds: int = 300
    transient_bounce_limit: int = 3
    transient_bounce_window_days: int = 7
    local_principal: str | None = None

    @property
    def watermark_expected_lag_seconds(self) -> int:
        """How far behind `now` a healthy source watermark may be (two poll cycles)."""
        return 2 * self.poll_interval_seconds + 30

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        default = cls()

        def text(name: str, fallback: str) -> str:
            return env.get(name) or fallback

        def number(name: str, fallback: int) -> int:
            raw = env.get(name)
            if raw is None or raw == "":
                return fallback
            value = int(raw)
            if value < 0:
                raise ValueError(f"{name} must be >= 0")
            return value

        return cls(
            table_name=text(names.ENV_LEDGER_TABLE, default.table_name),
            sender_email=text(names.ENV_SENDER_EMAIL, default.sender_email),
            ses_configuration_set=text(names.ENV_SES_CONFIGURATION_SET, default.ses_configuration_set),
            ses_events_queue_url=text(names.ENV_SES_EVENTS_QUEUE_URL, ""),
            escalation_queue_url=text(names.ENV_ESCALATION_QUEUE_URL, ""),
            sms_success_log_group=text(names.ENV_SMS_SUCCESS_LOG_GROUP, ""),
            sms_failure_log_group=text(names.ENV_SMS_FAILURE_LOG_GROUP, ""),
            ingestion_mode=text(names.ENV_INGESTION_MODE, default.ingestion_mode),
            poll_interval_seconds=number(names.ENV_POLL_INTERVAL_SECONDS, default.poll_interval_seconds),
            reset_window_seconds=number(names.ENV_RESET_WINDOW_SECONDS, default.reset_window_seconds),
            reset_max_failed_attempts=number(names.ENV_RESET_MAX_FAILED_ATTEMPTS, default.reset_max_failed_attempts),
            reset_url_template=text(names.ENV_RESET_URL_TEMPLATE, default.reset_url_template),
            unknown_grace_seconds=number(names.ENV_UNKNOWN_GRACE_SECONDS, default.unknown_grace_seconds),
            unknown_max_age_seconds=number(names.ENV_UNKNOWN_MAX_AGE_SECONDS, default.unknown_max_age_seconds),
            stale_policy=parse_stale_policy(env.get(names.ENV_STALE_ELIGIBILITY_POLICY, "")),
            idempotency_retention_days=number(names.ENV_IDEMPOTENCY_RETENTION_DAYS, default.idempotency_retention_days),
            suppression_lag_slo_seconds=number(
                names.ENV_SUPPRESSION_LAG_SLO_SECONDS, default.suppression_lag_slo_seconds
            ),
            transient_bounce_limit=number(names.ENV_TRANSIENT_BOUNCE_LIMIT, default.transient_bounce_limit),
            transient_bounce_window_days=number(
                names.ENV_TRANSIENT_BOUNCE_WINDOW_DAYS, default.transient_bounce_window_days
            ),
            local_principal=env.get(names.ENV_LOCAL_PRINCIPAL) or None,
        )


def parse_stale_policy(raw: str) -> dict[str, str]:
    """`allow`, `defer`, or per category: `transactional=allow,security=defer`."""
    policy = dict.fromkeys(CATEGORIES, "allow")
    raw = raw.strip()
    if not raw:
        return policy
    if "=" not in raw:
        return dict.fromkeys(CATEGORIES, _check_policy(raw))
    for part in raw.split(","):
        category, _, value = part.partition("=")
        if category.strip() not in CATEGORIES:
            raise ValueError(f"unknown category {category!r} in STALE_ELIGIBILITY_POLICY")
        policy[category.strip()] = _check_policy(value.strip())
    return policy


def _check_policy(value: str) -> str:
    if value not in ("allow", "defer"):
        raise ValueError(f"STALE_ELIGIBILITY_POLICY values are allow|defer, not {value!r}")
    return value
