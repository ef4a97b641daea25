"""One request's expression placeholders (adapters/dynamodb/expressions.py)."""

from __future__ import annotations

from sendledger.adapters.dynamodb.expressions import Update


def test_a_name_or_scalar_used_twice_shares_its_placeholder_and_types_never_mix() -> None:
    update = Update().set("state", "delivered")
    update.when(f"{update.one_of('state', ['accepted', 'delivered'])}")
    update.set("count", 1).set("label", "1").set("flag", True).set("other", "delivered")
    request = update.request()
    assert list(request["ExpressionAttributeNames"].values()) == ["state", "count", "label", "flag", "other"]
    values = request["ExpressionAttributeValues"]
    assert list(values.values()) == [{"S": "delivered"}, {"S": "accepted"}, {"N": "1"}, {"S": "1"}, {"BOOL": True}]
    assert request["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v2, #n2 = :v3, #n3 = :v4, #n4 = :v0"
    assert request["ConditionExpression"] == "(#n0 IN (:v1, :v0))"


def test_maps_and_lists_keep_a_placeholder_each() -> None:
    update = Update().set("a", {"k": 1}).set("b", {"k": 1}).set("c", [1]).set("d", [1])
    assert len(update.request()["ExpressionAttributeValues"]) == 4
