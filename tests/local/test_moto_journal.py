"""The journaled TransactWriteItems (local/moto_journal.py) behaves as moto's own, without table copies.

Each scenario runs twice on fresh moto state, once with moto's original method and once with the
journaled one, and both runs must end with the same answer (success, or the same error code and
CancellationReasons) and the same tables: every item, the GSI's view, the item count, the stream
records, and moto's internal dict of hash keys. Cancelled scenarios must also leave the seeded
state exactly as it was; committed ones must show every write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core.model_instances import reset_model_data
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.table import Table

from local import moto_journal
from local.constants import ACCOUNT_ID, REGION

PAIRS = "journal-pairs"  # hash + range key, a GSI, a stream
SINGLES = "journal-singles"  # hash key only
GSI = "by-due"

Transaction = list[dict[str, Any]]


def s(value: str) -> dict[str, str]:
    return {"S": value}


def pair(pk: str, sk: str, **attrs: dict[str, str]) -> dict[str, Any]:
    return {"pk": s(pk), "sk": s(sk), **attrs}


def create_tables(client: Any) -> None:
    client.create_table(
        TableName=PAIRS,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "due_shard", "due_at")
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": GSI,
                "KeySchema": [
                    {"AttributeName": "due_shard", "KeyType": "HASH"},
                    {"AttributeName": "due_at", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    client.create_table(
        TableName=SINGLES,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
    )


def seed(client: Any) -> None:
    for item in (
        pair("msg#1", "state", state=s("accepted"), due_shard=s("0"), due_at=s("2026-01-01T00:00:01")),
        pair("msg#1", "attempt#1", result=s("accepted")),
        pair("msg#2", "state", state=s("sent"), due_shard=s("0"), due_at=s("2026-01-01T00:00:02")),
        pair("sup#a", "state", version=s("3")),
    ):
        client.put_item(TableName=PAIRS, Item=item)
    for item in ({"id": s("one"), "v": s("1")}, {"id": s("two"), "v": s("2")}):
        client.put_item(TableName=SINGLES, Item=item)


def put(table: str, item: dict[str, Any], condition: str | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"TableName": table, "Item": item}
    if condition:
        op["ConditionExpression"] = condition
    return {"Put": op}


def update(table: str, key: dict[str, Any], expression: str, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "Update": {
            "TableName": table,
            "Key": key,
            "UpdateExpression": expression,
            "ExpressionAttributeValues": values,
        }
    }


def delete(table: str, key: dict[str, Any]) -> dict[str, Any]:
    return {"Delete": {"TableName": table, "Key": key}}


def check(table: str, key: dict[str, Any], condition: str, **extra: Any) -> dict[str, Any]:
    return {"ConditionCheck": {"TableName": table, "Key": key, "ConditionExpression": condition, **extra}}


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": s(pk), "sk": s(sk)}


# Every kind of write applied first, then something that cancels the transaction.
CANCELLED: dict[str, Transaction] = {
    "condition check fails after put, update, delete": [
        put(PAIRS, pair("msg#3", "state", state=s("accepted"), due_shard=s("0"), due_at=s("2026-01-01T00:00:03"))),
        {
            "Update": {
                "TableName": PAIRS,
                "Key": key("msg#1", "state"),
                "UpdateExpression": "SET #s = :s, due_at = :d",
                "ExpressionAttributeNames": {"#s": "state"},
                "ExpressionAttributeValues": {":s": s("sent"), ":d": s("2027-01-01T00:00:00")},
            }
        },
        delete(PAIRS, key("msg#2", "state")),
        delete(PAIRS, key("msg#1", "attempt#1")),
        check(PAIRS, key("sup#a", "state"), "version = :v", ExpressionAttributeValues={":v": s("4")}),
    ],
    "the failing check returns the old item (ALL_OLD)": [
        put(SINGLES, {"id": s("three"), "v": s("3")}),
        check(
            PAIRS,
            key("sup#a", "state"),
            "attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        ),
    ],
    "an update that creates an item under a new hash key, then a failed put condition": [
        update(PAIRS, key("msg#9", "state"), "SET due_shard = :z, due_at = :d", {":z": s("0"), ":d": s("2026")}),
        put(SINGLES, {"id": s("one"), "v": s("9")}, condition="attribute_not_exists(id)"),
    ],
    "a condition check on an absent item of a new hash key, then a delete": [
        check(PAIRS, key("nobody", "state"), "attribute_exists(pk)"),
        delete(SINGLES, {"id": s("two")}),
    ],
    "a put whose item lacks the range key (moto's generic failure reason)": [
        delete(SINGLES, {"id": s("one")}),
        put(PAIRS, {"pk": s("msg#7")}),
    ],
    "an update whose expression fails on the stored item (validation error mid-transaction)": [
        put(SINGLES, {"id": s("four"), "v": s("4")}),
        update(SINGLES, {"id": s("one")}, "ADD v :n", {":n": {"N": "1"}}),
    ],
    "two operations on one item (validation error after a write)": [
        delete(SINGLES, {"id": s("one")}),
        update(PAIRS, key("msg#1", "state"), "SET due_at = :d", {":d": s("2030")}),
        update(PAIRS, key("msg#1", "state"), "SET due_at = :d", {":d": s("2031")}),
    ],
}

COMMITTED: Transaction = [
    put(PAIRS, pair("msg#3", "state", state=s("accepted"), due_shard=s("0"), due_at=s("2026-01-01T00:00:03"))),
    update(PAIRS, key("msg#1", "state"), "SET due_at = :d REMOVE due_shard", {":d": s("2027-01-01T00:00:00")}),
    delete(PAIRS, key("msg#2", "state")),
    update(SINGLES, {"id": s("new")}, "SET v = :v", {":v": s("7")}),
    check(PAIRS, key("sup#a", "state"), "version = :v", ExpressionAttributeValues={":v": s("3")}),
]


def backend_table(name: str) -> Table:
    table: Table = dynamodb_backends[ACCOUNT_ID][REGION].tables[name]
    return table


def snapshot(client: Any) -> dict[str, Any]:
    """Everything a caller, or moto's own bookkeeping, could tell apart."""
    state: dict[str, Any] = {}
    for name in (PAIRS, SINGLES):
        state[name] = client.scan(TableName=name, ConsistentRead=True)["Items"]
        state[f"{name} count"] = client.describe_table(TableName=name)["Table"]["ItemCount"]
        state[f"{name} hash keys"] = sorted(
            (str(hash_key), sorted(map(str, bucket)) if isinstance(bucket, dict) else "item")
            for hash_key, bucket in backend_table(name).items.items()
        )
    state["gsi"] = client.query(
        TableName=PAIRS,
        IndexName=GSI,
        KeyConditionExpression="due_shard = :z",
        ExpressionAttributeValues={":z": s("0")},
    )["Items"]
    shard = backend_table(PAIRS).stream_shard
    assert shard is not None
    state["stream"] = [(record.record["eventName"], record.record["dynamodb"]["Keys"]) for record in shard.items]
    return state


def outcome(client: Any, transaction: Transaction) -> dict[str, Any]:
    try:
        client.transact_write_items(TransactItems=transaction)
    except ClientError as error:
        return {
            "code": error.response["Error"]["Code"],
            "message": error.response["Error"]["Message"],
            "reasons": error.response.get("CancellationReasons"),
        }
    return {"code": None}


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[..., None], Transaction], dict[str, Any]]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)

    def run_with(method: Callable[..., None], transaction: Transaction) -> dict[str, Any]:
        monkeypatch.setattr(DynamoDBBackend, "transact_write_items", method)
        with mock_aws():
            client = boto3.client("dynamodb", region_name=REGION)
            create_tables(client)
            seed(client)
            before = snapshot(client)
            tables_before = len(Table.instances_tracked)
            answer = outcome(client, transaction)
            return {
                "answer": answer,
                "before": before,
                "after": snapshot(client),
                "tables copied": len(Table.instances_tracked) - tables_before,
            }

    yield run_with


@pytest.mark.parametrize("name", sorted(CANCELLED))
def test_a_cancelled_transaction_leaves_every_item_as_it_was_and_answers_as_moto_does(
    run: Callable[[Callable[..., None], Transaction], dict[str, Any]], name: str
) -> None:
    moto = run(moto_journal.MOTO_TRANSACT_WRITE_ITEMS, CANCELLED[name])
    journaled = run(moto_journal.transact_write_items, CANCELLED[name])

    assert journaled["answer"]["code"] in {
        "TransactionCanceledException",
        "ValidationException",
        "ResourceNotFoundException",
    }
    assert journaled["answer"] == moto["answer"]
    assert journaled["after"] == journaled["before"]
    assert journaled["after"] == moto["after"]
    assert journaled["tables copied"] == 0


def test_cancellation_reasons_name_each_item_and_return_the_old_item_when_asked(
    run: Callable[[Callable[..., None], Transaction], dict[str, Any]],
) -> None:
    journaled = run(moto_journal.transact_write_items, CANCELLED["the failing check returns the old item (ALL_OLD)"])

    reasons = journaled["answer"]["reasons"]
    assert [reason["Code"] for reason in reasons] == ["None", "ConditionalCheckFailed"]
    assert reasons[1]["Item"] == pair("sup#a", "state", version=s("3"))


def test_a_committed_transaction_applies_every_write_as_moto_does(
    run: Callable[[Callable[..., None], Transaction], dict[str, Any]],
) -> None:
    moto = run(moto_journal.MOTO_TRANSACT_WRITE_ITEMS, COMMITTED)
    journaled = run(moto_journal.transact_write_items, COMMITTED)

    assert journaled["answer"] == moto["answer"] == {"code": None}
    assert journaled["after"] == moto["after"]
    after = journaled["after"]
    pairs = {(item["pk"]["S"], item["sk"]["S"]): item for item in after[PAIRS]}
    assert ("msg#2", "state") not in pairs
    assert pairs[("msg#3", "state")]["state"] == s("accepted")
    assert pairs[("msg#1", "state")]["due_at"] == s("2027-01-01T00:00:00")
    assert "due_shard" not in pairs[("msg#1", "state")]
    assert [item["pk"]["S"] for item in after["gsi"]] == ["msg#3"]  # msg#1 left the index, msg#2 is gone
    assert {"id": s("new"), "v": s("7")} in after[SINGLES]
    assert [event for event, _ in after["stream"][len(journaled["before"]["stream"]) :]] == [
        "INSERT",
        "MODIFY",
        "REMOVE",
    ]
    assert journaled["tables copied"] == 0


def test_moto_itself_copies_the_table_the_journal_does_not(
    run: Callable[[Callable[..., None], Transaction], dict[str, Any]],
) -> None:
    # What the journal exists for: moto's copies are Table instances, kept until reset_model_data.
    moto = run(moto_journal.MOTO_TRANSACT_WRITE_ITEMS, COMMITTED)
    assert moto["tables copied"] == len(COMMITTED)
    assert run(moto_journal.transact_write_items, COMMITTED)["tables copied"] == 0
    reset_model_data()
    assert Table.instances_tracked == []


def test_install_is_idempotent_and_in_place_for_the_tests_and_the_local_stack() -> None:
    moto_journal.install()
    moto_journal.install()
    assert DynamoDBBackend.transact_write_items is moto_journal.transact_write_items
