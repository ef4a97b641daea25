"""One request's expression placeholders (adapters/dynamodb/expressions.py)."""

from __future__ import annotations

from pathlib import Path

from sendledger.adapters.dynamodb import expressions
from sendledger.adapters.dynamodb.expressions import Expression, Update


def test_a_name_or_scalar_used_twice_shares_its_placeholder_and_types_never_mix() -> None:
    update = Update().set("state", "delivered")
    update.when(update.one_of("state", ["accepted", "delivered"]))
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


def test_typed_conditions_render_dynamodbs_syntax_on_the_requests_placeholders() -> None:
    update = Update().set("watermark", "2026-12-06T12:00:00+00:00")
    update.when(update.absent("watermark") | update.below("watermark", "2026-12-06T12:00:00+00:00"))
    update.when(update.equals("version", 3) & update.equals("suppressed", False))
    request = update.request()
    assert request["ConditionExpression"] == ("(attribute_not_exists(#n0) OR #n0 < :v0) AND (#n1 = :v1 AND #n2 = :v2)")
    assert request["ExpressionAttributeNames"] == {"#n0": "watermark", "#n1": "version", "#n2": "suppressed"}


def test_each_comparison_has_its_operator() -> None:
    e = Expression()
    built = [e.present("a"), e.differs("a", "x"), e.at_most("a", 1), e.above("a", 2)]
    assert [c.text for c in built] == ["attribute_exists(#n0)", "#n0 <> :v0", "#n0 <= :v1", "#n0 > :v2"]


def test_no_adapter_writes_a_condition_by_hand() -> None:
    """Conditions are built by the Expression of their request (typed), never as text."""
    folder = Path(expressions.__file__).parent
    by_hand = [
        path.name
        for path in folder.glob("*.py")
        if path.name != "expressions.py"
        and any(mark in path.read_text() for mark in ("Condition(", "attribute_not_exists(", "attribute_exists("))
    ]
    assert by_hand == []
