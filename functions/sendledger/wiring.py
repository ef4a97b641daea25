"""Composition root: real adapters, built once per warm container."""

from __future__ import annotations

from functools import cache

from sendledger.adapters.dynamodb.ledger import DynamoLedger
from sendledger.adapters.ses import SesEmailSender
from sendledger.adapters.sns import SnsSmsSender
from sendledger.domain.clock import SystemClock
from sendledger.settings import Settings
from sendledger.usecases.context import Services


@cache
def services() -> Services:
    settings = Settings.from_env()
    return Services(
        ledger=DynamoLedger(settings.table_name),
        email=SesEmailSender(settings.sender_email, settings.ses_configuration_set),
        sms=SnsSmsSender(),
        clock=SystemClock(),
        settings=settings,
    )
