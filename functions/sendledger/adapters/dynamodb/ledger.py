"""The ledger table's stores, one per aggregate, built once per warm container on one client."""

from __future__ import annotations

from typing import Any

from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
from sendledger.adapters.dynamodb.due_work import DueWork
from sendledger.adapters.dynamodb.escalations import Escalations
from sendledger.adapters.dynamodb.events import DeliveryEvents
from sendledger.adapters.dynamodb.messages import Messages
from sendledger.adapters.dynamodb.poller_state import PollerState
from sendledger.adapters.dynamodb.recipients import Recipients
from sendledger.adapters.dynamodb.resets import Resets
from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
from sendledger.adapters.dynamodb.sms_usage import DynamoSmsUsage
from sendledger.adapters.dynamodb.table import Table
from sendledger.adapters.dynamodb.templates import DynamoTemplates
from sendledger.adapters.dynamodb.webhook_tokens import WebhookTokens
from sendledger.domain.clock import Clock
from sendledger.domain.values import value


@value
class LedgerTable:
    table: Table
    messages: Messages
    recipients: Recipients
    resets: Resets
    poller_state: PollerState
    events: DeliveryEvents
    sms_receipts: SmsReceiptItems  # the publisher's: accepted SMS's receipts, from the stream
    due_work: DueWork
    escalation_timers: Escalations
    webhook_tokens: WebhookTokens
    caller_settings: DynamoCallerSettings
    sms_usage: DynamoSmsUsage
    templates: DynamoTemplates

    @classmethod
    def named(cls, table_name: str, clock: Clock, client: Any = None) -> LedgerTable:
        return cls.over(Table(table_name, client), clock)

    @classmethod
    def over(cls, table: Table, clock: Clock) -> LedgerTable:
        """The stores over `table`; `clock` is the one the caller-settings cache expires its reads on
        (the runtime's: a fake clock moves them too)."""
        return cls(
            table=table,
            messages=Messages(table),
            recipients=Recipients(table),
            resets=Resets(table),
            poller_state=PollerState(table),
            events=DeliveryEvents(table),
            sms_receipts=SmsReceiptItems(table),
            due_work=DueWork(table),
            escalation_timers=Escalations(table),
            webhook_tokens=WebhookTokens(table),
            caller_settings=DynamoCallerSettings(table, clock),
            sms_usage=DynamoSmsUsage(table),
            templates=DynamoTemplates(table),
        )
