"""Writes and reads through the ledger's models (models.py), over the ledger's one client.

A model gives the item's attribute names and types, its typed update actions and conditions
(`Item.cursor.does_not_exist() | (Item.cursor == previous)`), and PynamoDB serializes them; the
request goes through table.py like every other one: one connection per container, the same
error mapping (503, ConditionFailed with the old item) and the same counted requests.

Imported only by the paths that run after a Lambda's first send decision (the webhook
tokens, the admin routes' caller settings): importing
PynamoDB costs tens of milliseconds (benchmarks/README.md), which no handler pays at import and
the api's send path never pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pynamodb.expressions.update import Update

from sendledger.adapters.dynamodb.expressions import Item
from sendledger.adapters.dynamodb.table import Table

if TYPE_CHECKING:
    from pynamodb.expressions.condition import Condition
    from pynamodb.expressions.update import Action

    from sendledger.adapters.dynamodb.models import LedgerItem

Model = TypeVar("Model", bound="LedgerItem")


def expressions(actions: Sequence[Action] | None = None, condition: Condition | None = None) -> dict[str, Any]:
    """The request's expressions, as PynamoDB's own connection builds them."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    request: dict[str, Any] = {}
    if actions:
        request["UpdateExpression"] = Update(*actions).serialize(names, values)
    if condition is not None:
        request["ConditionExpression"] = condition.serialize(names, values)
    if names:
        request["ExpressionAttributeNames"] = {placeholder: name for name, placeholder in names.items()}
    if values:
        request["ExpressionAttributeValues"] = values
    return request


def update(
    table: Table, pk: str, sk: str, actions: Sequence[Action], condition: Condition | None = None,
    returning: str | None = None,
) -> Item:  # fmt: skip
    """UpdateItem of a model's attributes (ConditionFailed with the old item when `condition` fails)."""
    return table.update_with(pk, sk, expressions(actions, condition), returning=returning)


def put(table: Table, item: LedgerItem, condition: Condition | None = None) -> None:
    """PutItem of a model's item (ConditionFailed with the old item when `condition` fails)."""
    table.put_with(item.serialize(), expressions(condition=condition))


def read(model: type[Model], item: Item | None) -> Model | None:
    """A stored item as its model (None: absent)."""
    return model.from_raw_data(item) if item else None
