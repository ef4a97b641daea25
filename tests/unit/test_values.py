"""`@value` types behave as `@dataclass(frozen=True)` ones do: immutable, compared and hashed by field."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, field

import pytest

from sendledger.domain.messages import HistoryEntry
from sendledger.domain.values import value


@value
class Point:
    x: int
    y: int = 0
    label: str = field(default="", compare=False)
    tags: tuple[str, ...] = field(default_factory=tuple)


@value
class Labelled(Point):
    name: str = ""


def test_fields_cannot_be_assigned_added_or_deleted_after_init() -> None:
    point = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        point.label = "moved"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        point.z = 1  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError):
        del point.y
    assert (point.x, point.y, point.label, point.tags) == (1, 2, "", ())


def test_equal_values_hash_equal_and_uncompared_fields_change_neither() -> None:
    assert Point(1, 2) == Point(1, 2, label="other")
    assert hash(Point(1, 2)) == hash(Point(1, 2, label="other"))
    assert Point(1, 2) != Point(1, 3)
    assert {Point(1, 2), Point(1, 2, label="again"), Point(2, 1)} == {Point(1, 2), Point(2, 1)}
    assert hash(Point(1, 2)) == hash(dataclasses.make_dataclass("P", ["x", "y", "tags"], frozen=True)(1, 2, ()))


def test_subclass_fields_are_compared_hashed_and_frozen_too() -> None:
    assert Labelled(1, 2, name="a") != Labelled(1, 2, name="b")
    assert hash(Labelled(1, 2, name="a")) == hash(Labelled(1, 2, name="a"))
    with pytest.raises(FrozenInstanceError):
        Labelled(1).name = "b"  # type: ignore[misc]


def test_the_dataclass_helpers_still_apply() -> None:
    point = Point(1, 2, label="a", tags=("t",))
    moved = dataclasses.replace(point, x=9)
    assert moved == Point(9, 2, tags=("t",)) and moved.label == "a" and point.x == 1
    assert dataclasses.asdict(point) == {"x": 1, "y": 2, "label": "a", "tags": ("t",)}
    assert [f.name for f in dataclasses.fields(Labelled)] == ["x", "y", "label", "tags", "name"]
    assert repr(Point(1)) == "Point(x=1, y=0, label='', tags=())"


def test_the_domain_value_types_are_values() -> None:
    assert dataclasses.is_dataclass(HistoryEntry)
    assert HistoryEntry.__setattr__ is Point.__setattr__ and HistoryEntry.__hash__ is Point.__hash__
