"""The environment every Lambda gets: resource names plus every shared tunable (each enabled
provider's construct adds its own wiring)."""

from __future__ import annotations

from aws_cdk import aws_secretsmanager as secretsmanager

from infra.data import LedgerData
from infra.messaging import Messaging
from infra.settings import Settings
from sendledger import names


def lambda_environment(
    settings: Settings, data: LedgerData, messaging: Messaging, fingerprint_secret: secretsmanager.ISecret
) -> dict[str, str]:
    return {
        names.ENV_LEDGER_TABLE: data.table.table_name,
        names.ENV_ESCALATION_QUEUE_URL: messaging.escalation_queue.queue_url,
        names.ENV_TEST_OUTCOMES_QUEUE_URL: messaging.test_outcomes_queue.queue_url,
        names.ENV_FINGERPRINT_SECRET_ARN: fingerprint_secret.secret_arn,
        names.ENV_XRAY_SDK: "true" if settings.xray_sdk else "false",
        **settings.environment(),  # every tunable, under the name Settings.from_env reads
    }
