"""The Ledger port on the ledger table: each aggregate in its own module, composed here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sendledger.adapters.dynamodb.messages import Messages
from sendledger.adapters.dynamodb.poller_state import PollerState
from sendledger.adapters.dynamodb.recipients import Recipients
from sendledger.adapters.dynamodb.resets import Resets
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.messages import HistoryEntry, Message
from sendledger.ports import (
    IntentConflict,
    Outcome,
    RecipientState,
    ResetRecord,
    SendIntent,
    StoredResponse,
    SuppressionView,
)


class DynamoLedger:
    def __init__(self, table_name: str, client: Any = None) -> None:
        self.table = Table(table_name, client)
        self.table_name = table_name
        self.messages = Messages(self.table)
        self.recipients = Recipients(self.table)
        self.resets = Resets(self.table)
        self.poller_state = PollerState(self.table)

    # --- messages ------------------------------------------------------------------------------
    def commit_intent(self, intent: SendIntent) -> IntentConflict | None:
        return self.messages.commit_intent(intent, send=True)

    def commit_without_send(self, intent: SendIntent, stored: StoredResponse | None) -> IntentConflict | None:
        return self.messages.commit_intent(intent, stored, send=False)

    def record_outcome(self, outcome: Outcome) -> None:
        self.messages.record_outcome(outcome)

    def get_message(self, message_id: str, with_history: bool = True) -> Message | None:
        return self.messages.get(message_id)

    # --- recipients ----------------------------------------------------------------------------
    def get_recipient(self, recipient_key: str) -> RecipientState:
        return self.recipients.get(recipient_key)

    def get_suppression(self, recipient_key: str) -> SuppressionView:
        return self.recipients.view(recipient_key)

    def change_suppression(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState:
        return self.recipients.change(recipient_key, suppressed, reason, actor, expected_version, now)

    def record_unchanged_suppression(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        self.recipients.record_unchanged(recipient_key, suppressed, reason, actor, version, now)

    # --- watermarks ----------------------------------------------------------------------------
    def get_watermark(self, source: str) -> datetime | None:
        return self.poller_state.watermark(source)

    def recent_watermark(self, source: str, now: datetime, *, read: bool = True) -> datetime | None:
        return self.poller_state.recent_watermark(source, now, read=read)

    # --- password resets -----------------------------------------------------------------------
    def get_reset(self, account_id: str) -> ResetRecord | None:
        return self.resets.get(account_id)

    def consume_reset(self, account_id: str, token_hash: str, now: datetime) -> ResetRecord | None:
        return self.resets.consume(account_id, token_hash, now)

    def record_failed_attempt(self, record: ResetRecord, max_attempts: int, now: datetime) -> None:
        self.resets.record_failed_attempt(record, max_attempts, now)

    def rearm_reset(
        self, record: ResetRecord, new_token_hash: str, message: Message, entry: HistoryEntry, lease_until: datetime
    ) -> bool:
        return self.resets.rearm(record, new_token_hash, message, entry, lease_until)
