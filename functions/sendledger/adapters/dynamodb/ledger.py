"""The ledger table's stores, one per aggregate, built once per warm container on one client.

The api's stores are built with the table; the poller's, the publisher's and the webhooks' own
(delivery events, due work, escalation timers, SMS receipts, webhook tokens) on their first use,
so the api's cold start never imports their modules (the event plans, the ingestion and
status-out ports, the stream's decoding).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
from sendledger.adapters.dynamodb.messages import Messages
from sendledger.adapters.dynamodb.poller_state import PollerState
from sendledger.adapters.dynamodb.recipients import Recipients
from sendledger.adapters.dynamodb.resets import Resets
from sendledger.adapters.dynamodb.sms_usage import DynamoSmsUsage
from sendledger.adapters.dynamodb.table import Table
from sendledger.adapters.dynamodb.templates import DynamoTemplates
from sendledger.domain.clock import Clock
from sendledger.domain.values import value

if TYPE_CHECKING:
    from sendledger.adapters.dynamodb.due_work import DueWork
    from sendledger.adapters.dynamodb.escalations import Escalations
    from sendledger.adapters.dynamodb.events import DeliveryEvents
    from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
    from sendledger.adapters.dynamodb.webhook_tokens import WebhookTokens


@value
class LedgerTable:
    table: Table
    messages: Messages
    recipients: Recipients
    resets: Resets
    poller_state: PollerState
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
            caller_settings=DynamoCallerSettings(table, clock),
            sms_usage=DynamoSmsUsage(table),
            templates=DynamoTemplates(table),
        )

    # --- built on first use (cached in the instance, as a field would be) ---------------------
    @cached_property
    def events(self) -> DeliveryEvents:
        from sendledger.adapters.dynamodb.events import DeliveryEvents

        return DeliveryEvents(self.table)

    @cached_property
    def sms_receipts(self) -> SmsReceiptItems:
        """The publisher's: accepted SMS's receipts, from the stream."""
        from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems

        return SmsReceiptItems(self.table)

    @cached_property
    def due_work(self) -> DueWork:
        from sendledger.adapters.dynamodb.due_work import DueWork

        return DueWork(self.table)

    @cached_property
    def escalation_timers(self) -> Escalations:
        from sendledger.adapters.dynamodb.escalations import Escalations

        return Escalations(self.table)

    @cached_property
    def webhook_tokens(self) -> WebhookTokens:
        from sendledger.adapters.dynamodb.webhook_tokens import WebhookTokens

        return WebhookTokens(self.table)
