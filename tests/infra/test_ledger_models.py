"""The ledger table is declared once (adapters/dynamodb/models.py): CDK's table must be the one
the models describe, keys, indexes, time to live and stream alike."""

from __future__ import annotations

from typing import Any

from sendledger.adapters.dynamodb.models import create_table_arguments, ttl_attribute
from tests.infra.conftest import default_template, resources


def _ledger_table() -> dict[str, Any]:
    tables = resources(default_template(), "AWS::DynamoDB::Table")
    (table,) = [t["Properties"] for t in tables.values() if t["Properties"].get("StreamSpecification")]
    return table


def _indexes(indexes: list[dict[str, Any]]) -> dict[str, Any]:
    return {index["IndexName"]: (index["KeySchema"], index["Projection"]) for index in indexes}


def test_cdk_declares_the_keys_and_attribute_types_of_the_models():
    table, declared = _ledger_table(), create_table_arguments("ledger")
    assert table["KeySchema"] == declared["KeySchema"]
    definitions = {(d["AttributeName"], d["AttributeType"]) for d in table["AttributeDefinitions"]}
    assert definitions == {(d["AttributeName"], d["AttributeType"]) for d in declared["AttributeDefinitions"]}
    assert table["BillingMode"] == declared["BillingMode"]


def test_cdk_declares_the_indexes_of_the_models():
    table, declared = _ledger_table(), create_table_arguments("ledger")
    assert _indexes(table["GlobalSecondaryIndexes"]) == _indexes(declared["GlobalSecondaryIndexes"])


def test_cdk_declares_the_time_to_live_and_the_stream_of_the_models():
    table, declared = _ledger_table(), create_table_arguments("ledger")
    assert table["TimeToLiveSpecification"] == {"AttributeName": ttl_attribute(), "Enabled": True}
    assert table["StreamSpecification"] == {"StreamViewType": declared["StreamSpecification"]["StreamViewType"]}
