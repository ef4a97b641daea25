"""The ledger table's CreateTable arguments, for the local stack and tests (CDK mirrors them)."""

from __future__ import annotations

from typing import Any

from sendledger import names


def create_table_arguments(table_name: str) -> dict[str, Any]:
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        # The status publisher reads every committed change from the stream, as deployed.
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        "AttributeDefinitions": [
            {"AttributeName": names.TABLE_PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": names.TABLE_SORT_KEY, "AttributeType": "S"},
            {"AttributeName": names.DUE_WORK_INDEX_PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": names.DUE_WORK_INDEX_SORT_KEY, "AttributeType": "N"},
            {"AttributeName": names.EVIDENCE_INDEX_PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": names.EVIDENCE_INDEX_SORT_KEY, "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": names.TABLE_PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": names.TABLE_SORT_KEY, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": names.DUE_WORK_INDEX,
                "KeySchema": [
                    {"AttributeName": names.DUE_WORK_INDEX_PARTITION_KEY, "KeyType": "HASH"},
                    {"AttributeName": names.DUE_WORK_INDEX_SORT_KEY, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(names.DUE_WORK_INDEX_PROJECTION)},
            },
            evidence_index(),
        ],
    }


def evidence_index() -> dict[str, Any]:
    return {
        "IndexName": names.EVIDENCE_INDEX,
        "KeySchema": [
            {"AttributeName": names.EVIDENCE_INDEX_PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": names.EVIDENCE_INDEX_SORT_KEY, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    }


def create_ledger_table(dynamodb_client: Any, table_name: str) -> None:
    dynamodb_client.create_table(**create_table_arguments(table_name))
    dynamodb_client.update_time_to_live(
        TableName=table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": names.TABLE_TTL_ATTRIBUTE},
    )
