"""Powertools Feature Flags over a store: AppConfig deployed, a JSON file locally and in tests.

Both stores hand Powertools the same schema (functions/sendledger/feature_flags.json is the
file the local stack reads and the content CDK deploys to AppConfig) and both cache it for the
same TTL (`FLAGS_CACHE_SECONDS`): once warm, evaluating a send's flags makes no request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.feature_flags import FeatureFlags, StoreProvider
from aws_lambda_powertools.utilities.feature_flags.exceptions import ConfigurationStoreError, SchemaValidationError

from sendledger.domain.callers import CallerId
from sendledger.domain.flags import DEPLOYMENT, NO_FLAGS, Flag, FlagValues, flag_context, flag_values

logger = Logger(child=True)

COMMITTED_FLAGS = Path(__file__).resolve().parents[1] / "feature_flags.json"


class FileStore(StoreProvider):
    """The Powertools schema read from a JSON file, re-read once its TTL has passed (moto has no
    AppConfig data plane; the file is also what CDK deploys, so local and deployed agree)."""

    def __init__(self, path: Path, max_age_seconds: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.max_age_seconds = max_age_seconds
        self.monotonic = monotonic
        self.reads = 0
        self._cached: tuple[float, dict[str, Any]] | None = None

    @property
    def get_raw_configuration(self) -> dict[str, Any]:
        now = self.monotonic()
        if self._cached is not None and now - self._cached[0] < self.max_age_seconds:
            return self._cached[1]
        try:
            parsed = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigurationStoreError(f"feature flags file {self.path.name}: {exc}") from exc
        if not isinstance(parsed, dict):
            raise ConfigurationStoreError(f"feature flags file {self.path.name}: not a JSON object")
        self.reads += 1
        self._cached = (now, parsed)
        return parsed

    def get_configuration(self) -> dict[str, Any]:
        return self.get_raw_configuration


class PowertoolsFlags:
    """The flags port: each flag evaluated by Powertools with the caller's context, then typed."""

    def __init__(
        self,
        store: StoreProvider,
        categories: tuple[str, ...],
        retry_after_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.flags = FeatureFlags(store=store)
        self.categories = categories
        self.retry_after_seconds = retry_after_seconds
        self.monotonic = monotonic
        self._failed_at: float | None = None

    def values_for(self, caller: CallerId, context: Mapping[str, str] | None = None) -> FlagValues:
        if self._failed_at is not None and self.monotonic() - self._failed_at < self.retry_after_seconds:
            return NO_FLAGS
        try:
            # Powertools' evaluate answers its default on a store error without a word; asked
            # first, the failure is logged, and it is not asked again before the TTL (a store
            # outage must not cost a request per send).
            self.flags.get_configuration()
        except (ConfigurationStoreError, SchemaValidationError) as exc:
            self._failed_at = self.monotonic()
            logger.error("feature flags unavailable: the deployment's settings apply", extra={"error": str(exc)})
            return NO_FLAGS
        self._failed_at = None
        evaluated = flag_context(caller, context)
        raw = {flag: self.flags.evaluate(name=flag.value, context=evaluated, default=DEPLOYMENT) for flag in Flag}
        values, problems = flag_values(raw, self.categories)
        for problem in problems:
            logger.error("feature flag value ignored: the deployment's setting applies", extra={"flag": problem})
        return values
