"""DynamoDB's attribute-value JSON and the expressions of one request (names, values, clauses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]  # DynamoDB's attribute-value JSON: {"name": {"S": "..."}}


# --- attribute values ------------------------------------------------------------------------
def encode(value: Any) -> dict[str, Any]:
    if value is None:
        return {"NULL": True}  # only where written on purpose: encode_item leaves None out
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes):
        return {"B": value}
    if isinstance(value, int | float):
        return {"N": str(value)}
    if isinstance(value, dict):
        return {"M": {key: encode(inner) for key, inner in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [encode(inner) for inner in value]}
    raise TypeError(f"cannot store {type(value).__name__}")


def encode_item(values: dict[str, Any]) -> Item:
    return {name: encode(value) for name, value in values.items() if value is not None}


def decode(value: dict[str, Any]) -> Any:
    ((kind, inner),) = value.items()
    if kind in {"S", "BOOL", "B"}:
        return inner
    if kind == "N":
        return int(inner) if inner.lstrip("-").isdigit() else float(inner)
    if kind == "M":
        return {key: decode(v) for key, v in inner.items()}
    if kind == "L":
        return [decode(v) for v in inner]
    if kind == "NULL":
        return None
    raise TypeError(f"unexpected attribute type {kind}")


def decode_item(item: Item) -> dict[str, Any]:
    return {name: decode(value) for name, value in item.items()}


def key(pk: str, sk: str) -> Item:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


# --- expressions -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Condition:
    """A condition over one request's placeholders, built by its Expression (never a bare
    string: a request's condition is typed, so a hand-written one cannot reach a write)."""

    text: str

    def __or__(self, other: Condition) -> Condition:
        return Condition(f"{self.text} OR {other.text}")

    def __and__(self, other: Condition) -> Condition:
        return Condition(f"{self.text} AND {other.text}")


@dataclass
class Expression:
    """Placeholders for one request's expressions (names and values never collide).

    An attribute named twice, or a scalar used twice, shares one placeholder: the request the
    SDK serializes (and signs) is that much smaller.
    """

    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    _name_of: dict[str, str] = field(default_factory=dict, repr=False)
    _value_of: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    def name(self, attribute: str) -> str:
        placeholder = self._name_of.get(attribute)
        if placeholder is None:
            placeholder = self._name_of[attribute] = f"#n{len(self.names)}"
            self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        encoded = encode(value)
        ((kind, inner),) = encoded.items()
        scalar = (kind, inner) if kind in {"S", "N"} else (kind, str(inner)) if kind == "BOOL" else None
        placeholder = self._value_of.get(scalar) if scalar else None
        if placeholder is None:
            placeholder = f":v{len(self.values)}"
            self.values[placeholder] = encoded
            if scalar:
                self._value_of[scalar] = placeholder
        return placeholder

    def one_of(self, attribute: str, options: list[str]) -> Condition:
        return Condition(f"{self.name(attribute)} IN ({', '.join(self.value(option) for option in sorted(options))})")

    def absent(self, attribute: str) -> Condition:
        return Condition(f"attribute_not_exists({self.name(attribute)})")

    def present(self, attribute: str) -> Condition:
        return Condition(f"attribute_exists({self.name(attribute)})")

    def equals(self, attribute: str, value: Any) -> Condition:
        return self._compare(attribute, "=", value)

    def differs(self, attribute: str, value: Any) -> Condition:
        return self._compare(attribute, "<>", value)

    def below(self, attribute: str, value: Any) -> Condition:
        return self._compare(attribute, "<", value)

    def at_most(self, attribute: str, value: Any) -> Condition:
        return self._compare(attribute, "<=", value)

    def above(self, attribute: str, value: Any) -> Condition:
        return self._compare(attribute, ">", value)

    def _compare(self, attribute: str, operator: str, value: Any) -> Condition:
        return Condition(f"{self.name(attribute)} {operator} {self.value(value)}")

    def request(self) -> dict[str, Any]:
        request: dict[str, Any] = {}
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


@dataclass
class Update(Expression):
    """One UpdateItem's SET/REMOVE/ADD clauses and its condition."""

    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    adds: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)

    def set(self, attribute: str, value: Any) -> Update:
        """SET attribute = value; a second set of the same attribute keeps the first."""
        if attribute in self.assigned:
            return self
        self.assigned.add(attribute)
        self.sets.append(f"{self.name(attribute)} = {self.value(value)}")
        return self

    def set_if_absent(self, attribute: str, value: Any) -> Update:
        placeholder = self.name(attribute)
        self.sets.append(f"{placeholder} = if_not_exists({placeholder}, {self.value(value)})")
        return self

    def copy_from(self, attribute: str, source: str, default: Any) -> Update:
        """SET attribute = source as the item held it before this write, `default` if it had none."""
        self.assigned.add(attribute)
        self.sets.append(f"{self.name(attribute)} = if_not_exists({self.name(source)}, {self.value(default)})")
        return self

    def remove(self, *attributes: str) -> Update:
        self.removes += [self.name(attribute) for attribute in attributes]
        return self

    def add(self, attribute: str, amount: int) -> Update:
        self.adds.append(f"{self.name(attribute)} {self.value(amount)}")
        return self

    def append_entry(self, attribute: str, entry: str) -> Update:
        """Add a history entry that no write can overwrite: its attribute must be absent."""
        placeholder = self.name(attribute)
        self.sets.append(f"{placeholder} = {self.value(entry)}")
        self.conditions.append(Condition(f"attribute_not_exists({placeholder})"))
        return self

    def when(self, condition: Condition) -> Update:
        self.conditions.append(condition)
        return self

    def request(self) -> dict[str, Any]:
        clauses = []
        if self.sets:
            clauses.append("SET " + ", ".join(self.sets))
        if self.removes:
            clauses.append("REMOVE " + ", ".join(self.removes))
        if self.adds:
            clauses.append("ADD " + ", ".join(self.adds))
        request = {"UpdateExpression": " ".join(clauses), **super().request()}
        if self.conditions:
            request["ConditionExpression"] = " AND ".join(f"({c.text})" for c in self.conditions)
        return request
