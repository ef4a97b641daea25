"""Settings declared as dataclasses: read from names or variables, every field checked, the
problem named under the key it was given."""

from __future__ import annotations

import dataclasses
from enum import StrEnum

import pytest

from sendledger.settings_schema import Declared, SettingsError, number, setting


class Mode(StrEnum):
    FAST = "fast"
    SAFE = "safe"


def _words(raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        return tuple(raw.split())
    if isinstance(raw, tuple):
        return raw
    raise ValueError("must be words separated by spaces")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Example(Declared):
    name: str = setting("sendledger", env="EXAMPLE_NAME")
    retries: int = setting(3, env="EXAMPLE_RETRIES", ge=0, le=10)
    rate: float = setting(1.5, env="EXAMPLE_RATE", parse=number, gt=0)
    enabled: bool = setting(False, env="EXAMPLE_ENABLED")
    mode: Mode = setting(Mode.SAFE, env="EXAMPLE_MODE")
    tags: tuple[str, ...] = setting((), env="EXAMPLE_TAGS", parse=_words)
    stage: str = "dev"  # a plain default: read by its type, no variable


def test_text_forms_become_typed_values_by_variable_or_by_name() -> None:
    read = Example.from_values(
        {"EXAMPLE_RETRIES": " 7 ", "EXAMPLE_RATE": "0.25", "EXAMPLE_ENABLED": "yes", "mode": "fast", "stage": " prod "}
    )
    assert (read.retries, read.rate, read.enabled, read.mode, read.stage) == (7, 0.25, True, Mode.FAST, "prod")
    assert Example.from_values({"EXAMPLE_TAGS": "a b", "unknown": "ignored"}).tags == ("a", "b")


@pytest.mark.parametrize(
    ("key", "raw", "why"),
    [
        ("EXAMPLE_RETRIES", "three", "whole number"),
        ("EXAMPLE_RETRIES", "-1", "at least 0"),
        ("retries", 11, "at most 10"),
        ("EXAMPLE_RATE", "0", "greater than 0"),
        ("EXAMPLE_ENABLED", "maybe", "true or false"),
        ("EXAMPLE_MODE", "slow", "'fast', 'safe'"),
        ("EXAMPLE_NAME", 5, "text"),
        ("EXAMPLE_TAGS", 5, "words"),
    ],
)
def test_an_invalid_value_is_refused_naming_the_key_it_came_under(key: str, raw: object, why: str) -> None:
    with pytest.raises(SettingsError, match=rf"{key}={raw!r}: .*{why}"):
        Example.from_values({key: raw})


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(SettingsError) as refused:
        Example.from_values({"EXAMPLE_RETRIES": "x", "EXAMPLE_MODE": "slow"})
    assert [line.split("=")[0] for line in refused.value.problems] == ["EXAMPLE_RETRIES", "EXAMPLE_MODE"]


def test_construction_and_replace_check_every_field_as_reading_does() -> None:
    with pytest.raises(SettingsError, match="retries=42"):
        Example(retries=42)
    assert Example().replace({"retries": "4"}).retries == 4
    with pytest.raises(SettingsError, match="mode='slow'"):
        Example().replace({"mode": "slow"})


def test_variables_defaults_and_values_come_from_the_one_declaration() -> None:
    assert Example.variable("retries") == "EXAMPLE_RETRIES"
    with pytest.raises(TypeError, match="stage has no environment variable"):
        Example.variable("stage")
    assert Example.default("tags") == ()
    assert Example().values() == {
        "name": "sendledger",
        "retries": 3,
        "rate": 1.5,
        "enabled": False,
        "mode": Mode.SAFE,
        "tags": (),
        "stage": "dev",
    }
