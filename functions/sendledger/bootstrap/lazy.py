"""The composition root's one lazy mechanism."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class _OnFirstUse(Generic[T]):
    """Stands for a dependency until its first use builds it; then every attribute is the built one's."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build: Callable[[], T] | None = build
        self._built: T | None = None

    def __getattr__(self, name: str) -> Any:
        if self._build is not None:
            self._built, self._build = self._build(), None
        return getattr(self._built, name)


def on_first_use(build: Callable[[], T]) -> T:
    """The one lazy mechanism of the composition root: what a Lambda may never need (a test
    caller's carriers, Feature Flags, another email provider's sender) is built by its first use,
    so a container that never uses it never imports its modules nor makes its clients."""
    return cast(T, _OnFirstUse(build))
