"""Creating the ledger table as its models declare it (models.py), for the local stack and tests."""

from __future__ import annotations

from typing import Any

from sendledger.adapters.dynamodb.models import create_table_arguments, ttl_attribute


def create_ledger_table(dynamodb_client: Any, table_name: str, *, with_stream: bool = True) -> None:
    dynamodb_client.create_table(**create_table_arguments(table_name, with_stream=with_stream))
    dynamodb_client.update_time_to_live(
        TableName=table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_attribute()},
    )
