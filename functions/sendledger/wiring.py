"""Composition root: real adapters, built once per warm container."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.usecases.context import Services


@cache
def services() -> Services:
    # Imported here, not at module import: boto3, botocore and pynamodb load on the first
    # invocation instead of in every handler module's import (the cold-start bar: a handler's
    # import at most 1.5 times `import boto3`).
    from sendledger.adapters.dynamodb.ledger import DynamoLedger
    from sendledger.adapters.secrets import fingerprint_key
    from sendledger.adapters.ses import SesEmailSender
    from sendledger.adapters.sns import SnsSmsSender
    from sendledger.domain.clock import SystemClock
    from sendledger.domain.recipients import use_fingerprint_key
    from sendledger.settings import Settings
    from sendledger.usecases.context import Services

    settings = Settings.from_env()
    # Before any use case runs: SES event ids contain fingerprints, so every container must agree.
    use_fingerprint_key(fingerprint_key(settings.fingerprint_secret_arn))
    return Services(
        ledger=DynamoLedger(settings.table_name),
        email=SesEmailSender(settings.sender_email, settings.ses_configuration_set),
        sms=SnsSmsSender(),
        clock=SystemClock(),
        settings=settings,
    )
