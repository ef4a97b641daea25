"""moto's DynamoDB TransactWriteItems, rolled back from a journal of the items it touched.

moto 5.2.5 deep-copies every table a transaction names, once per transaction item, before it
applies anything, so each transaction costs time proportional to the table's size (the local
stack slowed by about 2 ms per stored message, and every copy stayed in moto's model-instance
registry until ``reset_model_data``). This version keeps, for each item it is about to write,
that item's before-image (a deep copy of the one item, or "absent") and the length of the
table's stream, and on cancellation puts exactly those back. Validation, condition checks,
the order of operations and the CancellationReasons are moto's own, unchanged: the loop below
is moto's with the backup and restore lines replaced.

A restored item is re-inserted into moto's per-table dict, so after a cancelled Delete its
dict position may differ; moto's Scan and Query sort what they return, so no answer shows it.
"""

from __future__ import annotations

from local.moto_version import require_supported_moto

require_supported_moto("local/moto_journal.py")

import copy
from dataclasses import dataclass, field
from typing import Any

from moto.dynamodb.comparisons import get_filter_expression
from moto.dynamodb.exceptions import (
    ConditionalCheckFailed,
    MockValidationException,
    MultipleTransactionsException,
    TooManyTransactionsException,
    TransactionCanceledException,
    TransactWriteSingleOpException,
)
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import StreamShard, Table

MOTO_TRANSACT_WRITE_ITEMS = DynamoDBBackend.transact_write_items
_MARK = "_sendledger_journaled"


@dataclass
class _BeforeImage:
    table: Table
    hash_key: DynamoType
    range_key: DynamoType | None
    item: Item | None  # None: the item did not exist
    had_bucket: bool  # range-key tables: whether the hash key had its dict of range keys

    def restore(self) -> None:
        items: dict[Any, Any] = self.table.items
        if self.range_key is None:
            if self.item is None:
                items.pop(self.hash_key, None)
            else:
                items[self.hash_key] = self.item
            return
        if self.item is not None:
            items.setdefault(self.hash_key, {})[self.range_key] = self.item
            return
        bucket = items.get(self.hash_key)
        if bucket is not None:
            bucket.pop(self.range_key, None)
            # moto's get_item reads through a defaultdict: drop a bucket the transaction created.
            if not bucket and not self.had_bucket:
                del items[self.hash_key]


@dataclass
class RollbackJournal:
    """Before-images of the items one transaction writes, undone in reverse order."""

    images: list[_BeforeImage] = field(default_factory=list)
    stream_lengths: dict[int, tuple[StreamShard, int]] = field(default_factory=dict)

    def record(self, table: Table, hash_key: DynamoType, range_key: DynamoType | None) -> None:
        items: dict[Any, Any] = table.items
        if range_key is None:
            had_bucket, current = True, items.get(hash_key)
        else:
            bucket = items.get(hash_key)
            had_bucket, current = bucket is not None, (bucket or {}).get(range_key)
        # An Update changes its item in place, so the image is a copy of this one item.
        self.images.append(_BeforeImage(table, hash_key, range_key, copy.deepcopy(current), had_bucket))
        shard = table.stream_shard
        if shard is not None:
            self.stream_lengths.setdefault(id(shard), (shard, len(shard.items)))

    def rollback(self) -> None:
        for image in reversed(self.images):
            image.restore()
        for shard, length in self.stream_lengths.values():
            del shard.items[length:]


def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    journal = RollbackJournal()
    target_items: set[tuple[str, str]] = set()

    def check_unicity(table_name: str, key: dict[str, Any]) -> None:
        item = (str(table_name), str(dict(sorted(key.items()))))
        if item in target_items:
            raise MultipleTransactionsException()
        target_items.add(item)

    errors: list[tuple[str, str, dict[str, Any]] | tuple[None, None, None]] = []
    for item in transact_items:
        original_item: dict[str, Any] | None = None
        if len(list(item.keys())) > 1:
            raise TransactWriteSingleOpException

        try:
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")

            table_name = op["TableName"]
            condition_expression = op.get("ConditionExpression")
            expression_attribute_names = op.get("ExpressionAttributeNames")
            expression_attribute_values = op.get("ExpressionAttributeValues")
            return_values_on_condition_check_failure = op.get("ReturnValuesOnConditionCheckFailure")

            key = _key_of(self, op_type, op)
            check_unicity(table_name, key)

            table = self.get_table(table_name)
            hash_key, range_key = self.get_keys_value(table, key)  # raises as get_item below would
            journal.record(table, hash_key, range_key)  # a ConditionCheck too: moto's read can add a bucket

            current = self.get_item(table_name, key)
            if condition_expression is not None:
                condition_op = get_filter_expression(
                    condition_expression,
                    expression_attribute_names,
                    expression_attribute_values,
                )
                if not condition_op.expr(current):
                    if return_values_on_condition_check_failure == "ALL_OLD" and current:
                        original_item = current.to_json()["Attributes"]
                    raise ConditionalCheckFailed(item=original_item)

            _write(self, op_type, op, key)
            errors.append((None, None, None))
        except (MultipleTransactionsException, MockValidationException):
            journal.rollback()
            raise
        except ConditionalCheckFailed as e:
            errors.append(("ConditionalCheckFailed", str(e.message), original_item))  # type: ignore[arg-type]
        except Exception as e:
            errors.append((type(e).__name__, str(e), original_item))  # type: ignore[arg-type]

    if any(code is not None for code, _, _ in errors):
        journal.rollback()
        raise TransactionCanceledException(errors)


def _key_of(backend: DynamoDBBackend, op_type: str, op: dict[str, Any]) -> dict[str, Any]:
    if op_type != "Put":
        key: dict[str, Any] = op["Key"]
        return key
    attrs = op["Item"]
    table = backend.get_table(op["TableName"])
    derived = {table.hash_key_attr: attrs[table.hash_key_attr]}
    if table.range_key_attr is not None:
        derived[table.range_key_attr] = attrs[table.range_key_attr]
    return derived


def _write(backend: DynamoDBBackend, op_type: str, op: dict[str, Any], key: dict[str, Any]) -> None:
    condition = op.get("ConditionExpression")
    names: Any = op.get("ExpressionAttributeNames")
    values: Any = op.get("ExpressionAttributeValues")
    if op_type == "Put":
        backend.put_item(
            op["TableName"],
            op["Item"],
            condition_expression=condition,
            expression_attribute_names=names,
            expression_attribute_values=values,
        )
    elif op_type == "Delete":
        backend.delete_item(
            op["TableName"],
            key,
            condition_expression=condition,
            expression_attribute_names=names,
            expression_attribute_values=values,
        )
    elif op_type == "Update":
        backend.update_item(
            op["TableName"],
            key,
            update_expression=op["UpdateExpression"],
            condition_expression=condition,
            expression_attribute_names=names,
            expression_attribute_values=values,
        )


def install() -> None:
    """Idempotent: replaces the method on moto's DynamoDB backend class for this process."""
    if getattr(DynamoDBBackend.transact_write_items, _MARK, False):
        return
    setattr(transact_write_items, _MARK, True)
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def uninstall() -> None:
    DynamoDBBackend.transact_write_items = MOTO_TRANSACT_WRITE_ITEMS  # type: ignore[method-assign]
