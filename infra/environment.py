"""The environment every Lambda gets: resource names plus the settings named in the spec."""

from __future__ import annotations

from infra.data import LedgerData
from infra.messaging import Messaging
from infra.settings import Settings
from sendledger import names


def lambda_environment(settings: Settings, data: LedgerData, messaging: Messaging) -> dict[str, str]:
    return {
        names.ENV_LEDGER_TABLE: data.table.table_name,
        names.ENV_SENDER_EMAIL: settings.sender_email,
        names.ENV_SES_CONFIGURATION_SET: messaging.configuration_set_name,
        names.ENV_SES_EVENTS_QUEUE_URL: messaging.events_queue.queue_url,
        names.ENV_ESCALATION_QUEUE_URL: messaging.escalation_queue.queue_url,
        names.ENV_SMS_SUCCESS_LOG_GROUP: messaging.sms_success_logs.log_group_name,
        names.ENV_SMS_FAILURE_LOG_GROUP: messaging.sms_failure_logs.log_group_name,
        names.ENV_INGESTION_MODE: settings.ingestion_mode,
        names.ENV_XRAY_SDK: "true" if settings.xray_sdk else "false",
        names.ENV_POLL_INTERVAL_SECONDS: str(settings.poll_interval_seconds),
        names.ENV_RESET_WINDOW_SECONDS: str(settings.reset_window_seconds),
        names.ENV_RESET_MAX_FAILED_ATTEMPTS: str(settings.reset_max_failed_attempts),
        names.ENV_RESET_URL_TEMPLATE: settings.reset_url_template,
        names.ENV_UNKNOWN_GRACE_SECONDS: str(settings.unknown_grace_seconds),
        names.ENV_UNKNOWN_MAX_AGE_SECONDS: str(settings.unknown_max_age_seconds),
        names.ENV_STALE_ELIGIBILITY_POLICY: settings.stale_eligibility_policy,
        names.ENV_IDEMPOTENCY_RETENTION_DAYS: str(settings.idempotency_retention_days),
        names.ENV_SUPPRESSION_LAG_SLO_SECONDS: str(settings.suppression_lag_slo_seconds),
        names.ENV_TRANSIENT_BOUNCE_LIMIT: str(settings.transient_bounce_limit),
        names.ENV_TRANSIENT_BOUNCE_WINDOW_DAYS: str(settings.transient_bounce_window_days),
    }
