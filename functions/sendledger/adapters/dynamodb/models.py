"""The ledger table declared once, as PynamoDB models: one model per item family.

`LedgerItem` is the table: its keys, its time-to-live attribute, its two sparse indexes and its
stream. Each family subclasses it with its key pattern (keys.py builds the keys) and the
attribute names its adapter reads and writes. The local stack and the tests create the table
from `create_table_arguments` (below, built from `LedgerItem`); CDK declares it in
infra/data.py, and tests/infra/test_ledger_models.py holds the two together.

Imported by the table's creators and by the adapters that name attributes, never by a handler
module at import: `import pynamodb` costs tens of milliseconds (benchmarks/README.md).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex, IncludeProjection, KeysOnlyProjection
from pynamodb.models import Model

from sendledger import names
from sendledger.adapters.dynamodb import templates

STREAM_VIEW_TYPE = "NEW_AND_OLD_IMAGES"  # the status publisher reads each change, before and after
BILLING_MODE = "PAY_PER_REQUEST"


class DueWorkIndex(GlobalSecondaryIndex["LedgerItem"]):  # type: ignore[no-untyped-call]  # pynamodb's own
    """Sparse: only items carrying due_kind (work the poller must revisit); `<kind>#<shard>`."""

    class Meta:
        index_name = names.DUE_WORK_INDEX
        projection = IncludeProjection(list(names.DUE_WORK_INDEX_PROJECTION))

    due_kind = UnicodeAttribute(hash_key=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(range_key=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)


class EvidenceIndex(GlobalSecondaryIndex["LedgerItem"]):  # type: ignore[no-untyped-call]
    """Sparse: message items only, by `<owner>#<UTC day>#<shard>` and creation time (KEYS_ONLY)."""

    class Meta:
        index_name = names.EVIDENCE_INDEX
        projection = KeysOnlyProjection()

    ev_day = UnicodeAttribute(hash_key=True, attr_name=names.EVIDENCE_INDEX_PARTITION_KEY)
    created_at = UnicodeAttribute(range_key=True, attr_name=names.EVIDENCE_INDEX_SORT_KEY)


class LedgerItem(Model):
    """The one table: every family's key is (pk, sk); items that may expire carry the TTL."""

    class Meta:
        table_name = "sendledger-ledger"  # the default; each deployment's name comes from Settings
        billing_mode = BILLING_MODE
        stream_view_type = STREAM_VIEW_TYPE

    PK_PATTERN: ClassVar[str] = "<family>#..."
    SK: ClassVar[str] = ""

    pk = UnicodeAttribute(hash_key=True, attr_name=names.TABLE_PARTITION_KEY)
    sk = UnicodeAttribute(range_key=True, attr_name=names.TABLE_SORT_KEY)
    expires_at = TTLAttribute(null=True, attr_name=names.TABLE_TTL_ATTRIBUTE)
    due_work = DueWorkIndex()
    evidence = EvidenceIndex()


class DueItem(LedgerItem):
    """An item with a state that the due-work index may hold (while it carries due_kind)."""

    state = UnicodeAttribute(null=True)
    due_kind = UnicodeAttribute(null=True, attr_name=names.DUE_WORK_INDEX_PARTITION_KEY)
    due_at = NumberAttribute(null=True, attr_name=names.DUE_WORK_INDEX_SORT_KEY)
    updated_at = UnicodeAttribute(null=True)


class MessageItem(DueItem):
    """A message, also its idempotency key's record; its history is `h:<entry key>` attributes
    (write-once, so built by the low-level writer: PynamoDB cannot condition a top-level
    attribute it does not declare)."""

    PK_PATTERN, SK = "MSG#<message id>", "MSG"
    ev_day = UnicodeAttribute(null=True, attr_name=names.EVIDENCE_INDEX_PARTITION_KEY)
    created_at = UnicodeAttribute(null=True, attr_name=names.EVIDENCE_INDEX_SORT_KEY)


class RecipientItem(LedgerItem):
    """A recipient's suppression, last send and transient bounces."""

    PK_PATTERN, SK = "SUP#<recipient key>", "STATE"


class EscalationTimerItem(DueItem):
    """The escalation timer beside its message: scheduled until finished (done + outcome)."""

    PK_PATTERN, SK = "MSG#<message id>", "ESC"
    outcome = UnicodeAttribute(null=True)


class ResetItem(LedgerItem):
    """A caller's account's active password reset."""

    PK_PATTERN, SK = "RESET#<caller id>#<account>", "ACTIVE"


class MessageReceiptItem(DueItem):
    """What a send's delivery events proved."""

    PK_PATTERN, SK = "MSG#<message id>", "RCPT"


class SmsReceiptItem(DueItem):
    """An SMS provider message id, to its message (due for an outcome like a message)."""

    PK_PATTERN, SK = "PMID#<provider id>", "PMID"


class UnmatchedEventItem(LedgerItem):
    """An event that matched no message yet (TTL)."""

    PK_PATTERN, SK = "EVT#<source>#<event id>", "EVT"


class WatermarkItem(LedgerItem):
    """A source's watermark and the SMS log cursor: the poller's, never a send's."""

    PK_PATTERN, SK = "WM#<source>", "WM"
    watermark = UnicodeAttribute(null=True)
    cursor = UnicodeAttribute(null=True)
    updated_at = UnicodeAttribute(null=True)


class WebhookTokenItem(LedgerItem):
    """A signed webhook's single-use token, by its SHA-256 only (TTL), with its body's SHA-256."""

    PK_PATTERN, SK = "WHTOKEN#<source>#<token sha256>", "TOKEN"
    body_hash = UnicodeAttribute(null=True)
    released = BooleanAttribute(null=True)


class CallerSettingsItem(LedgerItem):
    """One caller's settings: written by the admin routes, read through the container's cache."""

    PK_PATTERN, SK = "CALLER#<caller id>", "SETTINGS"
    callback_url = UnicodeAttribute(null=True)
    test_mode = BooleanAttribute(null=True)
    flag_context = MapAttribute[str, str](null=True)  # type: ignore[no-untyped-call]
    sms_countries = MapAttribute[str, Any](null=True)  # type: ignore[no-untyped-call]  # {"allow"|"block": [...]}
    sms_daily_segments = NumberAttribute(null=True)
    updated_at = UnicodeAttribute(null=True)
    updated_by = UnicodeAttribute(null=True)
    version = NumberAttribute(null=True)
    # One JSON string per admin change (at, actor, reason, fields changed), appended, oldest first.
    history = ListAttribute(of=UnicodeAttribute, null=True)  # type: ignore[var-annotated]


class SmsDayItem(LedgerItem):
    """A caller's SMS segments of one UTC day, counted by the publisher from the stream (TTL)."""

    PK_PATTERN, SK = "CALLER#<caller id>", "SMSDAY#<YYYY-MM-DD>"
    segments = NumberAttribute(null=True)


class TemplateVersionItem(LedgerItem):
    """A caller's published template version: written once (attribute_not_exists), retired in
    place. adapters/dynamodb/templates.py reads and writes it with these names, without PynamoDB
    on the send path's cold start (its first read of a caller's version)."""

    PK_PATTERN, SK = "TEMPLATE#<caller id>", "V#<id>#<version>"
    body = UnicodeAttribute(null=True, attr_name=templates.BODY)  # the canonical JSON the hash is over
    sha256 = UnicodeAttribute(null=True, attr_name=templates.SHA256)
    channels = UnicodeAttribute(null=True, attr_name=templates.CHANNELS)  # "email,sms"
    locales = UnicodeAttribute(null=True, attr_name=templates.LOCALES)  # "fr,pt-BR"
    published_at = UnicodeAttribute(null=True, attr_name=templates.PUBLISHED_AT)
    retired_at = UnicodeAttribute(null=True, attr_name=templates.RETIRED_AT)


class TemplateResetMailItem(LedgerItem):
    """A caller's reset-mail pointer: a copy of its latest `password-reset` version not retired
    (adapters/dynamodb/templates.py), rewritten conditional on `revision`; a reset reads it alone."""

    PK_PATTERN, SK = "TEMPLATE#<caller id>", "RESET"
    revision = NumberAttribute(attr_name=templates.REVISION)
    version = UnicodeAttribute(null=True, attr_name=templates.VERSION)  # None: the caller has none live
    body = UnicodeAttribute(null=True, attr_name=templates.BODY)
    sha256 = UnicodeAttribute(null=True, attr_name=templates.SHA256)
    channels = UnicodeAttribute(null=True, attr_name=templates.CHANNELS)
    locales = UnicodeAttribute(null=True, attr_name=templates.LOCALES)
    published_at = UnicodeAttribute(null=True, attr_name=templates.PUBLISHED_AT)


FAMILIES: tuple[type[LedgerItem], ...] = (
    MessageItem,
    RecipientItem,
    EscalationTimerItem,
    ResetItem,
    MessageReceiptItem,
    SmsReceiptItem,
    UnmatchedEventItem,
    WatermarkItem,
    WebhookTokenItem,
    CallerSettingsItem,
    TemplateVersionItem,
    TemplateResetMailItem,
    SmsDayItem,
)


def create_table_arguments(table_name: str, *, with_stream: bool = True) -> dict[str, Any]:
    """CreateTable's arguments for the table `LedgerItem` declares (the local stack, the tests)."""
    schema = LedgerItem._get_schema()  # the keys' and the indexes' attribute definitions, deduplicated
    indexes = [
        {
            "IndexName": index["index_name"],
            "KeySchema": _hash_first(index["key_schema"]),
            "Projection": index["projection"],
        }
        for index in schema["global_secondary_indexes"]
    ]
    stream = {"StreamEnabled": True, "StreamViewType": STREAM_VIEW_TYPE} if with_stream else {"StreamEnabled": False}
    return {
        "TableName": table_name,
        "BillingMode": BILLING_MODE,
        "StreamSpecification": stream,
        "AttributeDefinitions": schema["attribute_definitions"],
        "KeySchema": _hash_first(schema["key_schema"]),
        "GlobalSecondaryIndexes": indexes,
    }


def ttl_attribute() -> str:
    """The one attribute DynamoDB's time to live reads (UpdateTimeToLive after CreateTable)."""
    ttl: str = LedgerItem.expires_at.attr_name
    return ttl


def _hash_first(key_schema: list[Any]) -> list[dict[str, str]]:
    """DynamoDB reads a key schema in order: the partition (HASH) key first."""
    return sorted(({**part} for part in key_schema), key=lambda part: part["KeyType"] != "HASH")
