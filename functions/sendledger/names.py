"""Names shared by the Lambda code, the CDK stack and the local stack.

One place for environment variable names, resource name suffixes and the ledger table's key
layout, so that infra/, local/ and functions/ cannot drift apart.
"""

from __future__ import annotations

# --- Environment variables (read by functions/, set by infra/ and local/) -------------------
ENV_LEDGER_TABLE = "LEDGER_TABLE_NAME"
ENV_SENDER_EMAIL = "SENDER_EMAIL"
ENV_ESCALATION_QUEUE_URL = "ESCALATION_QUEUE_URL"
# Test mode's simulated provider events (providers/simulated/outlets.py), drained by the poller.
ENV_TEST_OUTCOMES_QUEUE_URL = "TEST_OUTCOMES_QUEUE_URL"
ENV_INGESTION_MODE = "INGESTION_MODE"  # "poll" | "push"
ENV_EMAIL_PROVIDER = "EMAIL_PROVIDER"  # the default email provider (domain/provider.py)
ENV_EMAIL_PROVIDERS = "EMAIL_PROVIDERS"  # more email providers enabled beside it, comma-separated
ENV_SMS_PROVIDER = "SMS_PROVIDER"  # the SMS provider
ENV_SMS_ALLOWED_COUNTRIES = "SMS_ALLOWED_COUNTRIES"  # ISO alpha-2, comma-separated; empty: every country
ENV_SMS_COUNTRY_TIMING = "SMS_COUNTRY_TIMING"  # JSON: rows over the shipped table (domain/sms_timing.py)

ENV_POLL_INTERVAL_SECONDS = "POLL_INTERVAL_SECONDS"
ENV_POLL_APPLY_CONCURRENCY = "POLL_APPLY_CONCURRENCY"
ENV_RESET_WINDOW_SECONDS = "RESET_WINDOW_SECONDS"
ENV_RESET_MAX_FAILED_ATTEMPTS = "RESET_MAX_FAILED_ATTEMPTS"
ENV_RESET_URL_TEMPLATE = "RESET_URL_TEMPLATE"
ENV_UNKNOWN_GRACE_SECONDS = "UNKNOWN_GRACE_SECONDS"
ENV_UNKNOWN_MAX_AGE_SECONDS = "UNKNOWN_MAX_AGE_SECONDS"
ENV_STALE_ELIGIBILITY_POLICY = "STALE_ELIGIBILITY_POLICY"
ENV_IDEMPOTENCY_RETENTION_DAYS = "IDEMPOTENCY_RETENTION_DAYS"
ENV_TRANSIENT_BOUNCE_LIMIT = "TRANSIENT_BOUNCE_LIMIT"
ENV_TRANSIENT_BOUNCE_WINDOW_DAYS = "TRANSIENT_BOUNCE_WINDOW_DAYS"
# Callers: the principals allowed /v1/admin/*, and principals mapped to one tenant id.
ENV_ADMIN_PRINCIPALS = "ADMIN_PRINCIPALS"
ENV_CALLER_TENANTS = "CALLER_TENANTS"
# ARN of the recipient-fingerprint key (unset: the local-only key); a name, not a secret.
ENV_FINGERPRINT_SECRET_ARN = "RECIPIENT_FINGERPRINT_SECRET_ARN"  # noqa: S105
ENV_LOCAL_PRINCIPAL = "SENDLEDGER_LOCAL_PRINCIPAL"
# Status out: the bus state changes are published to, and the signed callbacks.
ENV_EVENT_BUS_NAME = "EVENT_BUS_NAME"
# The local stack's own: registered as the local callers' callback URL and secret at start.
ENV_CALLBACK_URL = "CALLBACK_URL"
ENV_CALLBACK_RETRY_BASE_SECONDS = "CALLBACK_RETRY_BASE_SECONDS"
ENV_CALLBACK_MAX_ATTEMPTS = "CALLBACK_MAX_ATTEMPTS"
ENV_CALLBACK_TIMEOUT_SECONDS = "CALLBACK_TIMEOUT_SECONDS"
ENV_CALLBACK_SECRET = "CALLBACK_SECRET"  # noqa: S105 - the variable's name; locally only
# Each caller's callback secret is the Secrets Manager secret `<prefix><caller id>`.
ENV_CALLBACK_SECRET_PREFIX = "CALLBACK_SECRET_PREFIX"  # noqa: S105 - the variable's name
ENV_CALLBACK_ALLOW_LOOPBACK = "CALLBACK_ALLOW_LOOPBACK"  # the local stack's receiver only
CALLBACK_SECRETS_PATH = "sendledger/{stage}/callbacks/"
ENV_INJECT_TIMEOUTS = "SENDLEDGER_INJECT_TIMEOUTS"  # "true": conformance runs (providers/injected.py)
# Feature flags (Powertools): the store (`file` locally, `appconfig` deployed), its TTL, the
# file's path (empty: the committed functions/sendledger/feature_flags.json) and the AppConfig ids.
ENV_FLAGS_STORE = "FLAGS_STORE"
ENV_FLAGS_CACHE_SECONDS = "FLAGS_CACHE_SECONDS"
ENV_TEMPLATE_CACHE_SECONDS = "TEMPLATE_CACHE_SECONDS"
ENV_TEMPLATE_CACHE_SIZE = "TEMPLATE_CACHE_SIZE"
ENV_TEMPLATES_DIR = "TEMPLATES_DIR"
ENV_FLAGS_FILE = "FLAGS_FILE"
ENV_FLAGS_APPCONFIG_APPLICATION = "FLAGS_APPCONFIG_APPLICATION"
ENV_FLAGS_APPCONFIG_ENVIRONMENT = "FLAGS_APPCONFIG_ENVIRONMENT"
ENV_FLAGS_APPCONFIG_PROFILE = "FLAGS_APPCONFIG_PROFILE"
ENV_XRAY_SDK = "SENDLEDGER_XRAY_SDK"  # "true": Powertools Tracer subsegments (costs cold start)


# --- Ledger table layout (single table; see functions/sendledger/adapters/dynamodb) ---------
TABLE_PARTITION_KEY = "pk"
TABLE_SORT_KEY = "sk"
TABLE_TTL_ATTRIBUTE = "expires_at"
DUE_WORK_INDEX = "due-work"  # sparse GSI over items that the poller must revisit
DUE_WORK_INDEX_PARTITION_KEY = "due_kind"
DUE_WORK_INDEX_SORT_KEY = "due_at"
# Projected besides the keys: what the poller acts on without reading the item. Kept small
# because every send writes (and its outcome removes) an index entry.
DUE_WORK_INDEX_PROJECTION = ("message_id", "state", "escalation", "idem_key", "escalates")
# Sparse GSI over message items, for the caller's evidence export: partition
# `<owner>#<day>#<shard>` (a sixteenth of a day's sends of one caller), sorted by the item's own
# `created_at`. KEYS_ONLY: nothing but the intent's write ever changes its entry, so it costs one
# index write per send, no more.
EVIDENCE_INDEX = "evidence"
EVIDENCE_INDEX_PARTITION_KEY = "ev_day"
EVIDENCE_INDEX_SORT_KEY = "created_at"

# --- Metrics ---------------------------------------------------------------------------------
METRICS_NAMESPACE = "sendledger"
# POWERTOOLS_SERVICE_NAME of every Lambda, hence the only dimension (`service`) of the EMF
# metrics below; the CloudWatch alarms in infra/monitoring.py match exactly {service: this}.
METRICS_SERVICE = "sendledger"
METRIC_EVENT_TO_SUPPRESSION_LAG_MS = "EventToSuppressionLagMs"
METRIC_WATERMARK_AGE_SECONDS = "WatermarkAgeSeconds"
METRIC_UNKNOWN_BACKLOG = "UnknownBacklog"
METRIC_SMS_REFUSED = "SmsRefused"  # by `reason` (sms_guardrails.SmsRefusalReason) and in total
METRIC_SMS_SEGMENTS = "SmsSegments"  # by `caller`: billed segments the publisher counted

# --- Lambda entry points (module path relative to functions/) --------------------------------
API_HANDLER = "sendledger.handlers.api.lambda_handler"
POLLER_HANDLER = "sendledger.handlers.poller.lambda_handler"
SMS_DELIVERY_LOGS_HANDLER = "sendledger.handlers.sms_delivery_logs.lambda_handler"
PUBLISHER_HANDLER = "sendledger.handlers.publisher.lambda_handler"
CALLBACKS_HANDLER = "sendledger.handlers.callbacks.lambda_handler"
# The providers' signed webhook routes: their own function, apart from the IAM api.
WEBHOOKS_HANDLER = "sendledger.handlers.webhooks.lambda_handler"

# --- Status out ------------------------------------------------------------------------------
EVENT_BUS_PREFIX = "sendledger"  # the bus is f"{prefix}-{stage}"; locally sendledger-local
EVENT_SOURCE = "sendledger"

# Signed provider webhooks: no IAM (the provider signs them), one route per provider that pushes.
PROVIDERS_PATH = "/v1/providers/"
PROVIDER_EVENTS_ROUTE = PROVIDERS_PATH + "{provider}/events"


def webhook_path(provider: str) -> str:
    return PROVIDER_EVENTS_ROUTE.replace("{provider}", provider)


TEMPLATES_PATH = "/v1/templates/"  # a version's PUT may carry more than other bodies (request_gate.py)

# --- HTTP API routes: API Gateway's methods in infra/, the local gateway's table ------
ADMIN_PATH_PREFIX = "/v1/admin/"  # only ADMIN_PRINCIPALS (the api Lambda) on the admin invoke policy's grant
_ROUTES = (  # (method, path); {name} is one path segment
    ("POST", "/v1/messages"),
    ("GET", "/v1/messages/{message_id}"),
    ("GET", "/v1/messages"),
    ("GET", "/v1/evidence"),
    ("POST", "/v1/password-resets"),
    ("POST", "/v1/password-resets/consume"),
    # After .../consume: the local gateway takes the first template that matches, and a fixed
    # segment must win over {reset_id} as it does in API Gateway.
    ("GET", "/v1/password-resets/{reset_id}"),
    ("GET", "/v1/suppressions/{recipient}"),  # the caller's view
    ("GET", "/v1/admin/suppressions/{recipient}"),  # the admin's: actors, free-text reasons, every event id
    ("PUT", "/v1/admin/suppressions/{recipient}"),
    ("DELETE", "/v1/admin/suppressions/{recipient}"),
    ("GET", "/v1/admin/callers"),  # ?principal=ARN: that principal's caller
    ("GET", "/v1/admin/callers/{caller_id}"),
    ("PUT", "/v1/admin/callers/{caller_id}"),
    ("POST", "/v1/admin/callers/{caller_id}/secret"),  # rotate: the new secret, once
    ("DELETE", "/v1/admin/callers/{caller_id}/secret/previous"),  # end the rotation
    # The caller's templates and the deployment's (404 for another caller's): no DELETE, a retire.
    ("GET", "/v1/templates"),
    ("GET", "/v1/templates/{template_id}"),
    ("GET", "/v1/templates/{template_id}/versions/{version}"),
    ("PUT", "/v1/templates/{template_id}/versions/{version}"),
    ("POST", "/v1/templates/{template_id}/versions/{version}/preview"),
    ("POST", "/v1/templates/{template_id}/versions/{version}/retire"),
    ("POST", PROVIDER_EVENTS_ROUTE),  # a provider's signed webhook: no IAM, see infra/api.py
    ("GET", "/healthz"),
    ("GET", "/openapi.json"),
)
# HEAD is GET without the body (RFC 9110): API Gateway has a method only for what it is given.
API_ROUTES = (*_ROUTES, *(("HEAD", path) for method, path in _ROUTES if method == "GET"))
