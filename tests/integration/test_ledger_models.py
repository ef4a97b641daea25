"""The ledger's models (adapters/dynamodb/models.py) are the table: the table created from them
is what DynamoDB describes, and each family's key pattern is the one keys.py writes."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3

from sendledger.adapters.dynamodb import keys, models
from sendledger.adapters.dynamodb.ledger import LedgerTable
from sendledger.adapters.dynamodb.templates import RESET_MAIL_SK, DynamoTemplates, template_pk, template_sk
from sendledger.adapters.dynamodb.webhook_tokens import TOKEN_SK, token_pk
from sendledger.domain.callers import CallerId
from sendledger.domain.template_rules import parse_version
from sendledger.ports.templates import StoredVersion
from tests.conftest import TABLE
from tests.support.fakes import FakeClock

BUILT = {
    models.MessageItem: (keys.message_pk("01J0"), keys.MESSAGE_SK),
    models.RecipientItem: (keys.recipient_pk("r1"), keys.RECIPIENT_SK),
    models.EscalationTimerItem: (keys.message_pk("01J0"), keys.ESCALATION_SK),
    models.ResetItem: (keys.reset_pk("caller", "acct"), keys.RESET_SK),
    models.MessageReceiptItem: (keys.message_pk("01J0"), keys.MESSAGE_RECEIPT_SK),
    models.SmsReceiptItem: (keys.receipt_pk("sns-1"), keys.RECEIPT_SK),
    models.UnmatchedEventItem: ("EVT#ses#e1", keys.EVENT_SK),
    models.WatermarkItem: (keys.watermark_pk("ses"), keys.WATERMARK_SK),
    models.WebhookTokenItem: (token_pk("sendgrid", "ab"), TOKEN_SK),
    models.CallerSettingsItem: (keys.caller_pk("caller"), keys.CALLER_SETTINGS_SK),
    models.TemplateVersionItem: (template_pk(CallerId("caller")), template_sk("welcome", "1")),
    models.TemplateResetMailItem: (template_pk(CallerId("caller")), RESET_MAIL_SK),
    models.SmsDayItem: (keys.caller_pk("caller"), keys.sms_day_sk("2026-12-06")),
}


def test_every_family_has_a_model_whose_key_pattern_is_the_one_written():
    assert set(BUILT) == set(models.FAMILIES)
    for family, (pk, sk) in BUILT.items():
        fixed, _, varying = family.SK.partition("<")
        assert sk.startswith(fixed) if varying else sk == family.SK, family.__name__
        assert pk.startswith(family.PK_PATTERN.split("<", 1)[0]), family.__name__


def test_the_table_created_from_the_models_is_the_one_dynamodb_describes(aws):
    client = boto3.client("dynamodb")
    described = client.describe_table(TableName=TABLE)["Table"]
    declared = models.create_table_arguments(TABLE)
    assert described["KeySchema"] == declared["KeySchema"]
    assert {index["IndexName"]: index["Projection"] for index in described["GlobalSecondaryIndexes"]} == {
        index["IndexName"]: index["Projection"] for index in declared["GlobalSecondaryIndexes"]
    }
    assert described["StreamSpecification"] == declared["StreamSpecification"]
    ttl = client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": models.ttl_attribute()}


def test_a_model_reads_the_item_its_adapter_wrote(aws):
    """The attribute names are the models': the watermark the poller's adapter writes is the
    WatermarkItem PynamoDB deserializes (same table, same names)."""
    ledger = LedgerTable.named(TABLE, FakeClock(), boto3.client("dynamodb"))
    at = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    ledger.poller_state.set_watermark("ses", at)
    raw = ledger.table.get(keys.watermark_pk("ses"), keys.WATERMARK_SK)
    assert raw is not None
    item = models.WatermarkItem.from_raw_data(raw)
    assert (item.pk, item.sk, item.watermark) == (keys.watermark_pk("ses"), keys.WATERMARK_SK, raw["watermark"]["S"])


def test_the_template_model_reads_the_version_its_adapter_wrote(aws):
    ledger = LedgerTable.named(TABLE, FakeClock(), boto3.client("dynamodb"))
    version = parse_version("welcome", "1", {"params": [], "sms": {"text": "Hello"}}).version
    assert version is not None
    DynamoTemplates(ledger.table).put_new(StoredVersion(CallerId("caller"), version, datetime(2026, 12, 6, tzinfo=UTC)))
    raw = ledger.table.get(template_pk(CallerId("caller")), template_sk("welcome", "1"))
    assert raw is not None
    item = models.TemplateVersionItem.from_raw_data(raw)
    assert (item.sha256, item.channels, item.body) == (version.sha256, "sms", version.canonical().decode())
