"""The publisher's and the callbacks' composition: no send path is built for them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.domain.clock import Clock
    from sendledger.ports.sms_usage import SmsUsage
    from sendledger.ports.status_out import (
        CallbackQueue,
        EligibilityLabels,
        SmsReceipts,
        StatusChangeSource,
        StatusEventBus,
    )
    from sendledger.settings import Settings
    from sendledger.usecases.callbacks import CallbackPolicy, Receivers


@dataclass
class StatusOut:
    """The publisher's and the callbacks' adapters (the send path's are never built for them)."""

    settings: Settings
    changes: StatusChangeSource
    bus: StatusEventBus
    labels: EligibilityLabels  # `allow` sends' labels, from the recipient updates they committed
    receipts: SmsReceipts  # accepted SMS's receipts, from the outcomes they committed
    receivers: Receivers  # each caller's URL and secrets (cached), the resolver, the HTTP endpoint
    queues: Callable[[str], CallbackQueue]  # by the queue's ARN
    clock: Clock
    sms_usage: SmsUsage  # the publisher adds each batch's SMS segments per caller and day
    # The longest a `queues` call can take: with the POST's timeout, one record's time budget.
    retry_call_seconds: float = 0

    @property
    def policy(self) -> CallbackPolicy:
        from sendledger.usecases.callbacks import CallbackPolicy

        settings = self.settings
        return CallbackPolicy(
            retry_base_seconds=settings.callback_retry_base_seconds,
            max_attempts=settings.callback_max_attempts,
            timeout_seconds=settings.callback_timeout_seconds,
            allow_loopback=settings.callback_allow_loopback,
            queue_call_seconds=self.retry_call_seconds,
        )


@cache
def status_out() -> StatusOut:
    return build_status_out()


def build_status_out(settings: Settings | None = None, client: object = None) -> StatusOut:
    from sendledger.adapters.callback_queue import CALL_SECONDS, SqsCallbackQueue
    from sendledger.adapters.callback_secrets import SECRET_MAX_AGE, SecretsManagerCallbackSecrets
    from sendledger.adapters.callbacks_http import SocketResolver, UrllibEndpoint
    from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
    from sendledger.adapters.dynamodb.labels import StalenessLabels
    from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
    from sendledger.adapters.dynamodb.sms_usage import DynamoSmsUsage
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.adapters.eventbridge import EventBridgeBus
    from sendledger.domain.callback_schedule import CircuitBreakers
    from sendledger.domain.clock import SystemClock
    from sendledger.settings import Settings
    from sendledger.usecases.callbacks import Receivers

    settings = settings or Settings.from_env()
    clock = SystemClock()
    table = Table(settings.table_name, client)
    return StatusOut(
        settings=settings,
        changes=LedgerStream(table),
        bus=EventBridgeBus(settings.event_bus_name),
        labels=StalenessLabels(table),
        receipts=SmsReceiptItems(table),
        receivers=Receivers(
            callers=DynamoCallerSettings(table, clock),
            secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock, SECRET_MAX_AGE),
            resolver=SocketResolver(),
            endpoint=UrllibEndpoint(),
            breakers=CircuitBreakers(),
        ),
        queues=SqsCallbackQueue.of_queue,
        clock=clock,
        sms_usage=DynamoSmsUsage(table),
        retry_call_seconds=CALL_SECONDS,
    )
