"""Construct ids and infra-only names (shared env var names live in sendledger.names)."""

from __future__ import annotations

from typing import Final

PROJECT: Final = "sendledger"

# --- Construct ids (stable: changing one replaces the resource) ------------------------------
STACK_ID_PREFIX: Final = "sendledger"  # stack id = f"{prefix}-{stage}"
STAGE_STACK_ID: Final = "Sendledger"  # stack id inside a pipeline Stage
DATA_ID: Final = "Data"
MESSAGING_ID: Final = "Messaging"
INGESTION_ID: Final = "Ingestion"
API_ID: Final = "Api"
MONITORING_ID: Final = "Monitoring"
STATUS_OUT_ID: Final = "StatusOut"
LAMBDA_CODE_ID: Final = "LambdaCode"

# --- Lambda functions -----------------------------------------------------------------------
API_FUNCTION_ID: Final = "ApiFunction"
POLLER_FUNCTION_ID: Final = "PollerFunction"
SMS_LOGS_FUNCTION_ID: Final = "SmsDeliveryLogsFunction"

API_TIMEOUT_SECONDS: Final = 20  # below API Gateway's 29 s integration limit
# Upper bound of one poll cycle; part of the SLO budget (see settings.worst_case_lag_seconds).
POLLER_TIMEOUT_SECONDS: Final = 60
SMS_LOGS_TIMEOUT_SECONDS: Final = 30

# --- SLO budget -------------------------------------------------------------------------------
# Each provider states its own delay before a poll can apply its events (its settings
# fragment's event_delay); worst-case lag = poll interval + that delay + one poll cycle.
# Assumed (not measured in AWS) time to apply one event: its single TransactWriteItems round
# trip, typically 10-20 ms in-region, plus parsing and the SQS delete amortised over a batch.
# With poll_apply_concurrency it gives the drain rate that synthesis checks the peak against.
APPLY_MS_PER_EVENT: Final = 25

# --- Names ----------------------------------------------------------------------------------
DEV_STAGE: Final = "dev"


# --- Queues ---------------------------------------------------------------------------------
QUEUE_RETENTION_DAYS: Final = 14
DLQ_MAX_RECEIVE_COUNT: Final = 5
PUSH_BATCH_SIZE: Final = 10
# Callbacks: an invocation has time for every record of its batch to wait out its whole POST
# timeout (see Settings.callbacks_timeout_seconds), so a receiver that never answers cannot
# time the function out and spend the receives of records it never attempted.
CALLBACKS_BATCH_SIZE: Final = 10
CALLBACKS_START_SECONDS: Final = 10  # cold start and the secret's first read
# AWS: a source queue's visibility timeout at least six times the function's timeout.
CALLBACK_QUEUE_VISIBILITY_FACTOR: Final = 6

# --- IAM actions (one place, so tests and policies agree) ----------------------------------
LEDGER_ITEM_ACTIONS: Final = (
    "dynamodb:BatchGetItem",  # an SMS record without receipt: receipt + recipient + dedupe, then its last sends
    "dynamodb:ConditionCheckItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
EVENT_QUEUE_CONSUME_ACTIONS: Final = (
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:ReceiveMessage",
)
# Actions that AWS only authorizes on Resource "*" (no resource-level permissions).
XRAY_ACTIONS: Final = ("xray:PutTelemetryRecords", "xray:PutTraceSegments")
SMS_PUBLISH_ACTION: Final = "sns:Publish"  # publishing to a phone number has no resource ARN
SET_SMS_ATTRIBUTES_ACTION: Final = "sns:SetSMSAttributes"  # account-level setting
# Granted by the DynamoDB Streams event source (the publisher): ListStreams takes no stream ARN.
LIST_STREAMS_ACTION: Final = "dynamodb:ListStreams"
RESOURCE_STAR_ACTIONS: Final = frozenset(
    (*XRAY_ACTIONS, SMS_PUBLISH_ACTION, SET_SMS_ATTRIBUTES_ACTION, LIST_STREAMS_ACTION)
)
