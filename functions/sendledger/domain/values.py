"""`@value`: an immutable dataclass that costs half as much to define as `@dataclass(frozen=True)`.

A Lambda cold start defines every value type it imports, and the api imports some forty. For each
frozen dataclass the decorator compiles six methods from source; three of them (`__setattr__`,
`__delattr__`, `__hash__`) are the same for every class but for the field names. `@value` lets
the decorator compile the other three (`__init__`, `__repr__`, `__eq__`) and shares one guard and
one hash function among all value types: the same immutability after `__init__` (assigning or
deleting an attribute raises `FrozenInstanceError`), the same hash over the compared fields, and
`dataclasses.fields`, `replace` and `asdict` as before. benchmarks/README.md has the figures.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


def _assign_once(self: Any, name: str, value: Any) -> None:
    # `__init__` assigns each field once; anything after that is a mutation.
    if name in self.__dict__ or name not in self.__dataclass_fields__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _no_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _hash(self: Any) -> int:
    state = self.__dict__
    return hash(tuple(state[name] for name in type(self).__value_hashed_fields__))


@dataclass_transform(frozen_default=True)
def value(cls: type[T]) -> type[T]:
    """Make `cls` an immutable, hashable dataclass (fields as `@dataclass` reads them)."""
    made: Any = dataclass(cls)  # the same class object, with its generated methods
    made.__value_hashed_fields__ = tuple(f.name for f in fields(made) if (f.compare if f.hash is None else f.hash))
    made.__setattr__, made.__delattr__, made.__hash__ = _assign_once, _no_delete, _hash
    return cls
