"""The ledger table through low-level DynamoDB requests: conditional writes and transactions.

Low-level on purpose: the send path's CPU per request is a product bar, and every write here
needs exact control of its condition and of `ReturnValuesOnConditionCheckFailure` (a failed
condition hands back the old item, so callers decide from it without another read).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters import sdk
from sendledger.adapters.dynamodb.expressions import Condition, Expression, Item, Update, key
from sendledger.adapters.dynamodb.keys import DUE_SHARDS, EVIDENCE_PARTITIONS_PER_DAY
from sendledger.domain.errors import DependencyUnavailable

ALL_OLD = "ALL_OLD"
TRANSACTION_CONFLICT = "TransactionConflict"  # a cancellation reason: another write is in progress on the item
RETRYABLE_CODES = frozenset(
    {TRANSACTION_CONFLICT, "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)
# Ledger writes are conditional, so an SDK retry of one cannot apply twice: standard retries.
# One connection per request in flight at once: an export queries a day's partitions in
# parallel, a due-work pass its shards (botocore's default pool of 10 would open and discard the
# rest every time).
LEDGER_CONFIG = sdk.config(
    retries=sdk.STANDARD_RETRIES, max_pool_connections=max(EVIDENCE_PARTITIONS_PER_DAY, DUE_SHARDS)
)


def ledger_client() -> Any:
    return sdk.client("dynamodb", LEDGER_CONFIG)


# --- requests --------------------------------------------------------------------------------
class ConditionFailed(Exception):
    """A single-item write's condition failed; `old` is the item as it was (None: absent)."""

    def __init__(self, old: Item | None) -> None:
        super().__init__("condition failed")
        self.old = old


@dataclass
class Cancelled(Exception):
    """A transaction was cancelled: which labelled items failed, with their old items."""

    failed: dict[str, Item | None] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)

    @property
    def retryable(self) -> bool:
        return not self.failed and all(code in RETRYABLE_CODES for code in self.codes.values())


@contextmanager
def dependency_guard() -> Iterator[None]:
    """Any DynamoDB fault surfaces as one domain error (HTTP 503), never as a bare 500."""
    try:
        yield
    except (ClientError, BotoCoreError) as exc:
        raise DependencyUnavailable(f"ledger unavailable: {type(exc).__name__}") from exc


def _condition_failed(exc: ClientError) -> bool:
    return bool(exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")


def transaction_conflict(exc: BaseException | None) -> bool:
    """A single-item write refused because a transaction is in progress on the same item."""
    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") == (
        "TransactionConflictException"
    )


class Table:
    def __init__(self, name: str, client: Any = None) -> None:
        self.name = name
        # Made by the first request: the publisher, on state changes alone, reads nothing.
        self._client = sdk.LazyClient(ledger_client, client)

    @property
    def client(self) -> Any:
        return self._client.get()

    def get(self, pk: str, sk: str) -> Item | None:
        with dependency_guard():
            response = self.client.get_item(TableName=self.name, Key=key(pk, sk), ConsistentRead=True)
        item: Item | None = response.get("Item")
        return item

    def query(self, pk: str) -> list[Item]:
        items: list[Item] = []
        request: dict[str, Any] = {
            "TableName": self.name,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ConsistentRead": True,
        }
        while True:
            with dependency_guard():
                page = self.client.query(**request)
            items += page.get("Items", [])
            if not page.get("LastEvaluatedKey"):
                return items
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def batch_get(self, keys: list[tuple[str, str]], attributes: list[str] | None = None) -> list[Item]:
        """The items found (`attributes`: only those of each, by ProjectionExpression)."""
        request: dict[str, Any] = {"Keys": [key(pk, sk) for pk, sk in keys], "ConsistentRead": True}
        if attributes:
            request["ProjectionExpression"] = ", ".join(f"#p{n}" for n in range(len(attributes)))
            request["ExpressionAttributeNames"] = {f"#p{n}": name for n, name in enumerate(attributes)}
        with dependency_guard():
            response = self.client.batch_get_item(RequestItems={self.name: request})
        found: list[Item] = response.get("Responses", {}).get(self.name, [])
        return found

    def put(self, item: Item, condition: Condition | None = None, expression: Expression | None = None) -> None:
        request: dict[str, Any] = {"TableName": self.name, "Item": item}
        if condition:
            request.update(ConditionExpression=condition.text, ReturnValuesOnConditionCheckFailure=ALL_OLD)
            request.update((expression or Expression()).request())
        self._write(self.client.put_item, request)

    def update(self, pk: str, sk: str, update: Update, returning: str | None = None) -> Item:
        """The attributes `returning` asks for (UPDATED_NEW, ALL_NEW...), else nothing."""
        request: dict[str, Any] = {"TableName": self.name, "Key": key(pk, sk), **update.request()}
        if update.conditions:
            request["ReturnValuesOnConditionCheckFailure"] = ALL_OLD
        if returning:
            request["ReturnValues"] = returning
        return self._write(self.client.update_item, request)

    def update_with(self, pk: str, sk: str, expressions: dict[str, Any], returning: str | None = None) -> Item:
        """UpdateItem with expressions built elsewhere (modelled.py: through the models)."""
        request: dict[str, Any] = {"TableName": self.name, "Key": key(pk, sk), **expressions}
        if "ConditionExpression" in expressions:
            request["ReturnValuesOnConditionCheckFailure"] = ALL_OLD
        if returning:
            request["ReturnValues"] = returning
        return self._write(self.client.update_item, request)

    def put_with(self, item: Item, expressions: dict[str, Any]) -> None:
        """PutItem with a condition built elsewhere (modelled.py: through the models)."""
        request: dict[str, Any] = {"TableName": self.name, "Item": item, **expressions}
        if "ConditionExpression" in expressions:
            request["ReturnValuesOnConditionCheckFailure"] = ALL_OLD
        self._write(self.client.put_item, request)

    def _write(self, call: Any, request: dict[str, Any]) -> Item:
        try:
            with dependency_guard():
                response = call(**request)
                attributes: Item = response.get("Attributes", {})
                return attributes
        except DependencyUnavailable as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and _condition_failed(cause):
                raise ConditionFailed(cause.response.get("Item")) from None
            raise

    def transaction(self) -> Transaction:
        return Transaction(self)


@dataclass
class Transaction:
    """A labelled TransactWriteItems: callers ask "did the recipient condition fail, and what
    was the old item?" instead of counting positions."""

    table: Table
    labels: list[str] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)

    def put(
        self, label: str, item: Item, condition: Condition | None = None, expression: Expression | None = None
    ) -> None:
        action: dict[str, Any] = {"TableName": self.table.name, "Item": item}
        if condition:
            action.update(
                ConditionExpression=condition.text,
                ReturnValuesOnConditionCheckFailure=ALL_OLD,
                **(expression or Expression()).request(),
            )
        self._add(label, {"Put": action})

    def update(self, label: str, pk: str, sk: str, update: Update) -> None:
        action = {"TableName": self.table.name, "Key": key(pk, sk), **update.request()}
        if update.conditions:
            action["ReturnValuesOnConditionCheckFailure"] = ALL_OLD
        self._add(label, {"Update": action})

    def check(self, label: str, pk: str, sk: str, condition: Condition, expression: Expression) -> None:
        action = {
            "TableName": self.table.name,
            "Key": key(pk, sk),
            "ConditionExpression": condition.text,
            "ReturnValuesOnConditionCheckFailure": ALL_OLD,
            **expression.request(),
        }
        self._add(label, {"ConditionCheck": action})

    def _add(self, label: str, action: dict[str, Any]) -> None:
        self.labels.append(label)
        self.actions.append(action)

    def commit(self) -> None:
        if len(self.actions) == 1:
            raise ValueError("a one-item transaction costs twice a conditional write: use Table")
        try:
            with dependency_guard():
                self.table.client.transact_write_items(
                    TransactItems=self.actions, ClientRequestToken=request_token(self.actions)
                )
        except DependencyUnavailable as exc:
            cause = exc.__cause__
            if not isinstance(cause, ClientError) or cause.response.get("Error", {}).get("Code") != (
                "TransactionCanceledException"
            ):
                raise
            raise _cancelled(self.labels, cause) from None


def _cancelled(labels: list[str], exc: ClientError) -> Cancelled:
    cancelled = Cancelled()
    reasons = exc.response.get("CancellationReasons", [])
    for label, reason in zip(labels, reasons, strict=False):
        code = reason.get("Code", "None")
        if code in ("None", None):
            continue
        cancelled.codes[label] = code
        if code == "ConditionalCheckFailed":
            cancelled.failed[label] = reason.get("Item")
    if not reasons:
        cancelled.codes["?"] = "Unknown"
    return cancelled


def request_token(actions: list[dict[str, Any]]) -> str:
    """ClientRequestToken derived from the actions themselves.

    An SDK retry of the same request (after a network timeout) carries the same token, so
    DynamoDB applies it at most once; any different transaction gets a different token, so it
    never meets IdempotentParameterMismatch.
    """
    canonical = json.dumps(actions, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:36]
