"""Settings declared as frozen dataclasses: each field's default, environment variable, bounds
and parser written once, beside the field.

No validation library: every Lambda reads its settings at cold start, and pydantic's import
and validator build cost the small handlers about a quarter of a hand-written Lambda's whole
start (benchmarks/README.md). A field's parser takes the text of an environment variable or
CDK context, or a value already of its type (tests, `replace`), and returns the value; a
`ValueError` it raises names the problem, and the error names the key it was given under.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import Any, ClassVar, Self

__all__ = ["Declared", "SettingsError", "setting"]

Parser = Callable[[Any], Any]
Shower = Callable[[Any], str]  # a value as the text its parser reads back
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


class SettingsError(ValueError):
    """A setting is invalid; the message names the environment variable or context key."""

    def __init__(self, message: str, problems: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)

    @classmethod
    def listing(cls, problems: Iterable[str]) -> SettingsError:
        """One line per problem, each naming the key it was given under."""
        lines = list(problems)
        return cls("invalid sendledger settings:\n  - " + "\n  - ".join(lines), lines)


@dataclasses.dataclass(frozen=True)
class Rule:
    """How one field is read: its variable (None: not read from the environment) and checks."""

    env: str | None
    parse: Parser
    show: Shower | None = None  # None: `str`, a boolean in lower case
    ge: float | None = None
    le: float | None = None
    gt: float | None = None

    def check(self, raw: Any) -> Any:
        value = self.parse(raw)
        if self.ge is not None and value < self.ge:
            raise ValueError(f"must be at least {self.ge:g}")
        if self.le is not None and value > self.le:
            raise ValueError(f"must be at most {self.le:g}")
        if self.gt is not None and value <= self.gt:
            raise ValueError(f"must be greater than {self.gt:g}")
        return value

    def text(self, value: Any) -> str:
        """`value` as the environment carries it (what `check` reads back)."""
        if self.show is not None:
            return self.show(value)
        return str(value).lower() if isinstance(value, bool) else str(value)


def setting(
    default: Any = dataclasses.MISSING,
    *,
    env: str | None = None,
    parse: Parser | None = None,
    show: Shower | None = None,
    factory: Callable[[], Any] | None = None,
    ge: float | None = None,
    le: float | None = None,
    gt: float | None = None,
) -> Any:
    """A field of a `Declared` class. Its parser, unless given, follows the default's type: text
    (stripped), a whole number, a number, a boolean or an enum member; `show`, its inverse, is
    needed only where a value's text is not `str` of it."""
    example = factory() if factory is not None else default
    rule = Rule(env, parse or _parser_of(example), show, ge, le, gt)
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"rule": rule})
    return dataclasses.field(default=default, metadata={"rule": rule})


class Declared:
    """Base of a settings dataclass (`@dataclass(frozen=True, kw_only=True)` on each subclass):
    built from field names or environment variables, every field checked on construction."""

    _rules: ClassVar[dict[type, dict[str, Rule]]] = {}

    def __post_init__(self) -> None:
        problems = []
        for name, rule in self.rules().items():
            raw = getattr(self, name)
            try:
                object.__setattr__(self, name, rule.check(raw))
            except ValueError as exc:
                problems.append(f"{name}={raw!r}: {exc}")
        if problems:
            raise SettingsError.listing(problems)

    @classmethod
    def rules(cls) -> dict[str, Rule]:
        """Each field's rule, in declaration order."""
        found = Declared._rules.get(cls)
        if found is None:
            found = {field.name: _rule_of(field) for field in dataclasses.fields(cls)}  # type: ignore[arg-type]
            Declared._rules[cls] = found
        return found

    @classmethod
    def variable(cls, name: str) -> str:
        """The environment variable a field is read from."""
        env = cls.rules()[name].env
        if env is None:
            raise TypeError(f"setting {name} has no environment variable")
        return env

    @classmethod
    def default(cls, name: str) -> Any:
        """A field's default value."""
        field = next(field for field in dataclasses.fields(cls) if field.name == name)  # type: ignore[arg-type]
        if field.default is dataclasses.MISSING and callable(field.default_factory):
            return field.default_factory()
        return field.default

    @classmethod
    def from_values(cls, given: Mapping[str, Any]) -> Self:
        """Built from values keyed by field name or environment variable (others are ignored);
        a problem names the key it was given under."""
        rules = cls.rules()
        by_variable = {rule.env: name for name, rule in rules.items() if rule.env}
        values: dict[str, Any] = {}
        problems = []
        for key, raw in given.items():
            name = key if key in rules else by_variable.get(key)
            if name is None:
                continue
            try:
                values[name] = rules[name].check(raw)
            except ValueError as exc:
                problems.append(f"{key}={raw!r}: {exc}")
        if problems:
            raise SettingsError.listing(problems)
        return cls(**values)

    def replace(self, changes: Mapping[str, Any]) -> Self:
        """A copy with some fields changed, checked as on construction."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def values(self) -> dict[str, Any]:
        """Every field's value, by name."""
        return {name: getattr(self, name) for name in self.rules()}

    def environment_of(self, names: Iterable[str]) -> dict[str, str]:
        """Those fields as environment variables: the text `from_values` reads back."""
        rules = self.rules()
        return {self.variable(name): rules[name].text(getattr(self, name)) for name in names}


def _rule_of(field: dataclasses.Field[Any]) -> Rule:
    """A field's rule: declared with `setting`, or a plain default read by its type."""
    rule = field.metadata.get("rule")
    return rule if isinstance(rule, Rule) else Rule(None, _parser_of(field.default))


def text(raw: Any) -> str:
    if not isinstance(raw, str):
        raise ValueError("must be text")
    return raw.strip()


def optional_text(raw: Any) -> str | None:
    return None if raw is None else text(raw)


def whole_number(raw: Any) -> int:
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    return int(_numeric(raw, (int,), int, "a whole number"))


def number(raw: Any) -> float:
    return float(_numeric(raw, (int, float), float, "a number"))


def _numeric(raw: Any, kinds: tuple[type, ...], from_text: Callable[[str], Any], what: str) -> Any:
    """`raw` when already one of `kinds` (never a boolean), or its text converted."""
    if isinstance(raw, kinds) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        try:
            return from_text(raw.strip())
        except ValueError:
            pass
    raise ValueError(f"must be {what}")


def boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        return raw.strip().lower() in _TRUE
    raise ValueError("must be true or false")


def member_of(kind: type[Enum]) -> Parser:
    """The member of `kind` whose value is given."""

    def parse(raw: Any) -> Enum:
        try:
            return kind(raw.strip() if isinstance(raw, str) else raw)
        except ValueError:
            raise ValueError("must be one of " + ", ".join(repr(member.value) for member in kind)) from None

    return parse


def _parser_of(example: Any) -> Parser:
    if isinstance(example, Enum):
        return member_of(type(example))
    for kind, parser in ((bool, boolean), (int, whole_number), (float, number), (str, text)):
        if isinstance(example, kind):
            return parser
    raise TypeError(f"a setting defaulting to {example!r} needs a parser")
