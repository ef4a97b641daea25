"""A provider's settings fragment: the base of each slice's settings.py.

Below settings.py, which gathers every slice's fragment: a slice's settings module imports this
module and the domain, nothing else of sendledger (the import contract in pyproject.toml).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from sendledger.domain.provider import Provider
from sendledger.settings_schema import Declared


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fragment(Declared):
    """One provider's settings (each subclass a `@dataclass(frozen=True, kw_only=True)` too).
    Fields named in WIRING are filled in by CDK or the local stack (secret ARNs, queue URLs); the
    others are tunables, CDK context keys as well."""

    PROVIDER: ClassVar[Provider]
    WIRING: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def tunables(cls) -> list[str]:
        return [name for name in cls.rules() if name not in cls.WIRING]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        variables = [cls.variable(name) for name in cls.rules()]
        return cls.from_values({variable: env[variable] for variable in variables if env.get(variable)})

    @classmethod
    def context_keys(cls) -> dict[str, str]:
        """CDK context: a tunable's key is its variable in lower case (`mailgun_domain`)."""
        return {name: cls.variable(name).lower() for name in cls.tunables()}

    @classmethod
    def from_context(cls, ctx: Mapping[str, Any]) -> Self:
        keys = cls.context_keys()
        return cls.from_values({name: ctx[key] for name, key in keys.items() if ctx.get(key) is not None})

    def environment(self) -> dict[str, str]:
        """The tunables as the Lambda environment (the wiring is the constructs' to set)."""
        return self.environment_of(self.tunables())

    def event_delay(self) -> tuple[str, int]:
        """The provider's own delay before a poll can apply an event it emitted (synthesis adds
        the poll interval and one poll cycle and checks the sum against the suppression-lag SLO)."""
        raise NotImplementedError(f"{self.PROVIDER.value} states no event delay")

    def capacity_problem(self, peak_events_per_second: float, poll_interval_seconds: int) -> str | None:
        """Why the provider's own lane cannot keep up with the stated peak (None: it can)."""
        return None

    def complaint_delay(self) -> tuple[str, int, str] | None:
        """A pull-only provider's wait before a delivered message is first read again for a
        complaint (label, seconds, the later reads in words); None: its complaints reach
        sendledger like its other events."""
        return None

    def status_interval(self) -> int | None:
        """How long after acceptance (and after each answer) a message's status is asked again;
        None: the provider's events come by themselves (it pushes them, or a lane pulls them)."""
        return None
