"""Environment variables: the in-process moto run, and what a deployed Lambda sees (cold start)."""

from __future__ import annotations

import os

from infra.settings import Settings as DeployedTunables
from local.constants import (
    ACCOUNT_ID,
    CONFIGURATION_SET,
    ESCALATION_QUEUE,
    LEDGER_TABLE,
    REGION,
    SENDER_EMAIL,
    SES_EVENTS_QUEUE,
    queue_url,
    sms_log_groups,
)

__all__ = ["ACCOUNT_ID", "LEDGER_TABLE", "REGION", "configure_in_process", "lambda_environment"]

# Never reach a real account: fake credentials, no profile, no endpoint override.
_AWS_FAKE = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}
_AWS_DROP = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL")


def configure_in_process() -> None:
    """The benchmark process: moto in-process, Powertools as deployed except X-Ray (no daemon)."""
    for key in _AWS_DROP:
        os.environ.pop(key, None)
    os.environ.update(_AWS_FAKE)
    os.environ.update(
        {
            "POWERTOOLS_SERVICE_NAME": "sendledger",
            "POWERTOOLS_METRICS_NAMESPACE": "sendledger",
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_DEV": "false",
            "LEDGER_TABLE_NAME": LEDGER_TABLE,
            "SENDER_EMAIL": SENDER_EMAIL,
            "SES_CONFIGURATION_SET": CONFIGURATION_SET,
            "POLL_INTERVAL_SECONDS": "60",
        }
    )


def lambda_environment(function_name: str, memory_mb: int = 512) -> dict[str, str]:
    """What the Lambda runtime plus infra/lambdas.py + infra/environment.py set (example values).

    Tracing is ACTIVE in the stack, so POWERTOOLS_TRACE_DISABLED is *not* set: the Tracer
    imports and patches the X-Ray SDK exactly as it does in a deployed cold start.
    """
    success_group, failure_group = sms_log_groups()
    return {
        # Lambda runtime (python3.x on arm64)
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "2026/11/29/[$LATEST]0123456789abcdef",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.14",
        "LAMBDA_TASK_ROOT": "/var/task",
        "LAMBDA_RUNTIME_DIR": "/var/runtime",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000",
        "_HANDLER": f"sendledger.handlers.{function_name.removeprefix('sendledger-')}.lambda_handler",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        # infra/lambdas.py
        "POWERTOOLS_SERVICE_NAME": "sendledger",
        "POWERTOOLS_METRICS_NAMESPACE": "sendledger",
        "POWERTOOLS_LOG_LEVEL": "INFO",
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        # infra/environment.py: the resources, then every tunable as the stack sets it by default
        **DeployedTunables().environment(),
        "LEDGER_TABLE_NAME": LEDGER_TABLE,
        "SENDER_EMAIL": SENDER_EMAIL,
        "SES_CONFIGURATION_SET": CONFIGURATION_SET,
        "SES_EVENTS_QUEUE_URL": queue_url(SES_EVENTS_QUEUE),
        "ESCALATION_QUEUE_URL": queue_url(ESCALATION_QUEUE),
        "SMS_SUCCESS_LOG_GROUP": success_group,
        "SMS_FAILURE_LOG_GROUP": failure_group,
    }
