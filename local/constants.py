"""The local stack's account, region and resource names: local/, its tests and the benchmarks read them here.

The product's own names (environment variables, the configuration set, the SMS log groups SNS
imposes) come from sendledger.names; the rest are names only the local stack picks.
"""

from __future__ import annotations

from sendledger.providers.ses import settings as ses
from sendledger.providers.sns import settings as sns

REGION = "us-east-1"
ACCOUNT_ID = "123456789012"  # moto's default account: its backends are keyed by it
LOCAL_PRINCIPAL = f"arn:aws:iam::{ACCOUNT_ID}:user/local-developer"

# SigV4 on the local gateway: the credentials it accepts (name:access_key:secret[:caller ARN],
# comma-separated; without an ARN each signs as arn:aws:iam::<account>:user/<name>), and
# whether unsigned requests still pass. app-task-1 and app-task-2 are two sessions of one role,
# as two ECS tasks of one service sign: one caller.
ENV_LOCAL_CREDENTIALS = "SENDLEDGER_LOCAL_CREDENTIALS"
APP_ROLE_SESSION = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/app-role/"
DEFAULT_LOCAL_CREDENTIALS = (
    "app:AKIALOCALAPP0000001:local-app-secret,"
    "app2:AKIALOCALAPP0000002:local-app2-secret,"
    "admin:AKIALOCALADMIN00001:local-admin-secret,"
    f"app-task-1:AKIALOCALTASK000001:local-task-1-secret:{APP_ROLE_SESSION}task-1,"
    f"app-task-2:AKIALOCALTASK000002:local-task-2-secret:{APP_ROLE_SESSION}task-2"
)
ADMIN_CREDENTIAL = "admin"  # the only one a signed /v1/admin/* request may use
ENV_LOCAL_AUTH = "SENDLEDGER_LOCAL_AUTH"  # "open" (default): unsigned requests act as LOCAL_PRINCIPAL; "sigv4"
SIGV4_SERVICE = "execute-api"

LEDGER_TABLE = "sendledger-ledger"
SENDER_EMAIL = "no-reply@example.com"
CONFIGURATION_SET = ses.CONFIGURATION_SET_PREFIX
SES_EVENTS_TOPIC = "sendledger-ses-events"
SES_EVENTS_QUEUE = "sendledger-ses-events"
SES_EVENTS_DLQ = "sendledger-ses-events-dlq"
ESCALATION_QUEUE = "sendledger-escalations"
ESCALATION_DLQ = "sendledger-escalations-dlq"
TEST_OUTCOMES_QUEUE = "sendledger-test-outcomes"  # test mode's simulated events (providers/simulated/outlets.py)
TEST_OUTCOMES_DLQ = "sendledger-test-outcomes-dlq"
MAX_RECEIVE_COUNT = 5
SMS_SUCCESS_SUBSCRIPTION_FILTER = "sendledger-sms-success"
SMS_FAILURE_SUBSCRIPTION_FILTER = "sendledger-sms-failure"
POLLER_SCHEDULE_RULE = "sendledger-poller-schedule"

API_FUNCTION = "sendledger-api"
POLLER_FUNCTION = "sendledger-poller"
SMS_DELIVERY_LOGS_FUNCTION = "sendledger-sms-delivery-logs"
PUBLISHER_FUNCTION = "sendledger-publisher"


def sms_log_groups(region: str = REGION, account_id: str = ACCOUNT_ID) -> tuple[str, str]:
    """(success, failure): where SNS writes SMS delivery-status records."""
    prefix = f"sns/{region}/{account_id}"
    return f"{prefix}/{sns.SUCCESS_LOG_GROUP_SUFFIX}", f"{prefix}/{sns.FAILURE_LOG_GROUP_SUFFIX}"


SMS_SUCCESS_LOG_GROUP, SMS_FAILURE_LOG_GROUP = sms_log_groups()


def topic_arn(name: str, region: str = REGION, account_id: str = ACCOUNT_ID) -> str:
    return f"arn:aws:sns:{region}:{account_id}:{name}"


def queue_url(name: str, region: str = REGION, account_id: str = ACCOUNT_ID) -> str:
    """The queue URL shape AWS gives (moto's server answers with its own host instead)."""
    return f"https://sqs.{region}.amazonaws.com/{account_id}/{name}"
