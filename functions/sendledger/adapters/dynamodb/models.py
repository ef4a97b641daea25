"""pynamodb models of the single ledger table (key layout in sendledger.names).

| item | pk | sk |
|---|---|---|
| idempotency key | IDEM#<caller-hash>#<key> | IDEM |
| message | MSG#<message_id> | MSG |
| history entry (append-only) | MSG#<message_id> | H#<iso time>#<ulid> |
| escalation timer | MSG#<message_id> | ESC |
| suppression state / its history | SUP#<recipient key> | STATE / H#<iso>#<ulid> |
| recipient's last send | SUP#<recipient key> | LAST |
| source watermark / cursor | WM#<source> | WM |
| password reset (one per account) | RESET#<account_id> | ACTIVE |
| SMS receipt: SNS message id → message, and what SNS reported | PMID#<sns message id> | PMID |
| receipt history (append-only) | PMID#<sns message id> | H#<iso time>#<ulid> |
| applied delivery event (dedupe, TTL) | EVT#<source>#<event id> | EVT |
| recipient's transient bounces in the window | SUP#<recipient key> | TRANSIENT |
"""

from __future__ import annotations

import os

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from sendledger import names


def _region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


class _Meta:
    table_name = "sendledger-ledger"
    region = _region()
    max_retry_attempts = 2
    connect_timeout_seconds = 2
    read_timeout_seconds = 5


class LedgerModel(Model):
    class Meta(_Meta):
        pass

    pk = UnicodeAttribute(hash_key=True, attr_name=names.TABLE_PARTITION_KEY)
    sk = UnicodeAttribute(range_key=True, attr_name=names.TABLE_SORT_KEY)


class DueWorkIndex(GlobalSecondaryIndex["MessageItem"]):  # type: ignore[no-untyped-call]
    class Meta:
        index_name = names.DUE_WORK_INDEX
        projection = AllProjection()

    due_kind = UnicodeAttribute(hash_key=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(range_key=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)


class IdempotencyItem(LedgerModel):
    class Meta(_Meta):
        pass

    fingerprint = UnicodeAttribute()
    message_id = UnicodeAttribute()
    status = UnicodeAttribute()  # in_progress | completed
    lease_until = UnicodeAttribute()
    response_body = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute()
    expires_at = TTLAttribute(attr_name=names.TABLE_TTL_ATTRIBUTE)


class MessageItem(LedgerModel):
    class Meta(_Meta):
        pass

    message_id = UnicodeAttribute()
    state = UnicodeAttribute()
    channel = UnicodeAttribute()
    to = UnicodeAttribute(attr_name="recipient")
    recipient_key = UnicodeAttribute()
    template_id = UnicodeAttribute()
    template_version = UnicodeAttribute()
    category = UnicodeAttribute()
    created_at = UnicodeAttribute()
    updated_at = UnicodeAttribute()
    provider_message_id = UnicodeAttribute(null=True)
    reason = UnicodeAttribute(null=True)
    reset_account_id = UnicodeAttribute(null=True)
    params = UnicodeAttribute(null=True)  # JSON; never holds secrets (internal templates re-mint)
    escalation = UnicodeAttribute(null=True)  # JSON
    attempt = NumberAttribute(default=1)
    idempotency_pk = UnicodeAttribute(null=True)
    parent_key = UnicodeAttribute(null=True)
    owner = UnicodeAttribute(null=True)
    due_kind = UnicodeAttribute(null=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(null=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)
    due_work = DueWorkIndex()


class HistoryItem(LedgerModel):
    class Meta(_Meta):
        pass

    at = UnicodeAttribute()
    type = UnicodeAttribute()
    state = UnicodeAttribute(null=True)
    evidence = UnicodeAttribute()  # JSON


class SuppressionItem(LedgerModel):
    class Meta(_Meta):
        pass

    suppressed = BooleanAttribute()
    version = NumberAttribute()
    reason = UnicodeAttribute(null=True)
    since = UnicodeAttribute(null=True)
    source_event = UnicodeAttribute(null=True)
    updated_at = UnicodeAttribute()


class LastSendItem(LedgerModel):
    class Meta(_Meta):
        pass

    last_send_at = UnicodeAttribute()
    last_message_id = UnicodeAttribute()


class WatermarkItem(LedgerModel):
    class Meta(_Meta):
        pass

    watermark = UnicodeAttribute(null=True)
    cursor = UnicodeAttribute(null=True)
    updated_at = UnicodeAttribute()


class ResetItem(LedgerModel):
    class Meta(_Meta):
        pass

    reset_id = UnicodeAttribute()
    state = UnicodeAttribute()
    token_hash = UnicodeAttribute()
    created_at = UnicodeAttribute()
    valid_until = UnicodeAttribute()
    failed_attempts = NumberAttribute(default=0)
    message_id = UnicodeAttribute()
    expires_at = TTLAttribute(attr_name=names.TABLE_TTL_ATTRIBUTE)


class ReceiptItem(LedgerModel):
    """pk `PMID#<SNS message id>`, sk `PMID`: an accepted SMS send's receipt.

    An SNS delivery-status record names only SNS's message id, so its outcome lands here (one
    transaction, no lookup); reading a message merges its receipt (ledger.get_message).
    """

    class Meta(_Meta):
        pass

    message_id = UnicodeAttribute()
    state = UnicodeAttribute(null=True)
    reason = UnicodeAttribute(null=True)
    updated_at = UnicodeAttribute(null=True)
    escalates = BooleanAttribute(null=True)  # the message has an escalation (its config stays there)
    due_kind = UnicodeAttribute(null=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(null=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)


class EventItem(LedgerModel):
    class Meta(_Meta):
        pass

    source = UnicodeAttribute()
    kind = UnicodeAttribute()
    occurred_at = UnicodeAttribute()
    applied_at = UnicodeAttribute()
    message_id = UnicodeAttribute(null=True)
    recipient = UnicodeAttribute(null=True)  # fingerprint, never the address
    expires_at = TTLAttribute(attr_name=names.TABLE_TTL_ATTRIBUTE)


class TransientBounceItem(LedgerModel):
    class Meta(_Meta):
        pass

    times = ListAttribute(of=UnicodeAttribute)  # ISO times inside the window, oldest first
    revision = NumberAttribute()
    updated_at = UnicodeAttribute()


class EscalationItem(LedgerModel):
    """The ESC item written by the send path, plus the poller's progress markers."""

    class Meta(_Meta):
        pass

    message_id = UnicodeAttribute()
    state = UnicodeAttribute()
    escalation = UnicodeAttribute(null=True)
    updated_at = UnicodeAttribute()
    outcome = UnicodeAttribute(null=True)
    due_kind = UnicodeAttribute(null=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(null=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)


ALL_MODELS: tuple[type[LedgerModel], ...] = (
    LedgerModel,
    IdempotencyItem,
    MessageItem,
    HistoryItem,
    SuppressionItem,
    LastSendItem,
    WatermarkItem,
    ResetItem,
    ReceiptItem,
    EventItem,
    TransientBounceItem,
    EscalationItem,
)


def bind(table_name: str) -> None:
    """Point every model at the deployed table (name known only at runtime)."""
    for model in ALL_MODELS:
        if model.Meta.table_name != table_name or model.Meta.region != _region():
            model.Meta.table_name = table_name
            model.Meta.region = _region()
            model._connection = None
