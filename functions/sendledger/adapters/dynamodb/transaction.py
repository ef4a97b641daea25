"""A labelled TransactWriteItems built from pynamodb models.

pynamodb groups transaction items by kind (checks, deletes, puts, updates), so cancellation
reasons come back in that order; labelling each item lets callers ask "did the suppression
check fail, and what was the old item?" instead of counting positions.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError
from pynamodb.connection import Connection
from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from sendledger.adapters.dynamodb.models import LedgerModel

ALL_OLD = "ALL_OLD"
RETRYABLE_CODES = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)


@dataclass
class Cancelled(Exception):
    """Which labelled items failed their condition, with the old item where one existed."""

    failed: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)

    @property
    def retryable(self) -> bool:
        return not self.failed and all(code in RETRYABLE_CODES for code in self.codes.values())


def request_token(*items: list[dict[str, Any]]) -> str:
    """ClientRequestToken derived from the items themselves.

    An SDK retry of the same request (after a network timeout) carries the same token, so
    DynamoDB applies it at most once; any different transaction gets a different token, so it
    never meets IdempotentParameterMismatch.
    """
    canonical = json.dumps(items, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:36]


@dataclass
class LabelledTransaction:
    connection: Connection
    _checks: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _puts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def check(self, label: str, model: type[LedgerModel], pk: str, sk: str, condition: Condition) -> None:
        kwargs = model.get_operation_kwargs_from_class(pk, range_key=sk, condition=condition)
        kwargs["ReturnValuesOnConditionCheckFailure"] = ALL_OLD
        self._checks.append((label, kwargs))

    def put(self, label: str, item: LedgerModel, condition: Condition | None = None) -> None:
        kwargs = item.get_save_kwargs_from_instance(
            condition=condition, return_values_on_condition_failure=ALL_OLD if condition is not None else None
        )
        self._puts.append((label, kwargs))

    def update(self, label: str, item: LedgerModel, actions: list[Action], condition: Condition | None = None) -> None:
        kwargs = item.get_update_kwargs_from_instance(
            actions=actions,
            condition=condition,
            return_values_on_condition_failure=ALL_OLD if condition is not None else None,
            add_version_condition=False,
        )
        self._updates.append((label, kwargs))

    def commit(self) -> None:
        labels = [label for label, _ in self._checks + self._puts + self._updates]
        checks = [kwargs for _, kwargs in self._checks]
        puts = [kwargs for _, kwargs in self._puts]
        updates = [kwargs for _, kwargs in self._updates]
        try:
            self.connection.transact_write_items(
                condition_check_items=checks,
                delete_items=[],
                put_items=puts,
                update_items=updates,
                client_request_token=request_token(checks, puts, updates),
            )
        except TransactWriteError as exc:
            if not isinstance(exc.cause, ClientError) or exc.cause_response_code != "TransactionCanceledException":
                raise
            cancelled = Cancelled()
            for label, reason in zip(labels, exc.cancellation_reasons, strict=False):
                if reason is None or reason.code == "None":
                    continue
                cancelled.codes[label] = reason.code
                if reason.code == "ConditionalCheckFailed":
                    cancelled.failed[label] = reason.raw_item
            raise cancelled from exc
