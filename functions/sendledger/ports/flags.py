"""Feature flags, evaluated per caller (adapters/feature_flags.py: Powertools over a store)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from sendledger.domain.callers import CallerId
from sendledger.domain.flags import NO_FLAGS, FlagValues


class FeatureFlags(Protocol):
    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        """The caller's flag values, its settings' flag context among the rules' keys; the store
        is read at most once per cache period (never per send)."""


class NoFlags:
    """No store: every flag says "the deployment's setting" (tests and tools that build a runtime)."""

    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        return NO_FLAGS
