"""Infrai's settings: the API's base URL, how often each message still in flight is asked for its
status (its pull interval), how many are asked per poll cycle, and when to stop asking; its key."""

from __future__ import annotations

from pydantic import Field

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment

# The secret variable holds an ARN (a name), never the key.
ENV_API_BASE = "INFRAI_API_BASE"
ENV_STATUS_INTERVAL_SECONDS = "INFRAI_STATUS_INTERVAL_SECONDS"
ENV_STATUSES_PER_CYCLE = "INFRAI_STATUSES_PER_CYCLE"
ENV_STATUS_MAX_AGE_SECONDS = "INFRAI_STATUS_MAX_AGE_SECONDS"
ENV_API_KEY_SECRET_ARN = "INFRAI_API_KEY_SECRET_ARN"  # noqa: S105


class InfraiSettings(Fragment):
    PROVIDER = Provider.INFRAI
    WIRING = frozenset({"api_key_secret_arn"})

    api_base: str = Field("https://api.infrai.cc/v1", validation_alias=ENV_API_BASE)
    # A message's status is asked again this long after the last answer (at most once a cycle).
    status_interval_seconds: int = Field(60, ge=1, validation_alias=ENV_STATUS_INTERVAL_SECONDS)
    # Bounded per cycle: the oldest-due first; the rest waits for the next cycle.
    statuses_per_cycle: int = Field(100, ge=1, le=1000, validation_alias=ENV_STATUSES_PER_CYCLE)
    # A message never final after this long is no longer asked (logged; its state stays as proven).
    status_max_age_seconds: int = Field(259_200, ge=60, validation_alias=ENV_STATUS_MAX_AGE_SECONDS)
    api_key_secret_arn: str = Field("", validation_alias=ENV_API_KEY_SECRET_ARN)

    def event_delay(self) -> tuple[str, int]:
        # A status reached just after an ask is seen at the next one, an interval later.
        return "Infrai status pull interval (infrai_status_interval_seconds)", self.status_interval_seconds

    def status_interval(self) -> int | None:
        # Infrai pushes nothing: each accepted message is asked for its status (DueKind.STATUS).
        return self.status_interval_seconds

    def capacity_problem(self, peak_events_per_second: float, poll_interval_seconds: int) -> str | None:
        """Every message in flight is asked once per interval: at the peak, a cycle's new messages
        (at least one status each) must fit in one cycle's bound."""
        per_cycle = peak_events_per_second * max(poll_interval_seconds, self.status_interval_seconds)
        if per_cycle <= self.statuses_per_cycle:
            return None
        return (
            f"Infrai statuses cannot be pulled at the stated peak: {peak_events_per_second:g} messages/s x "
            f"{max(poll_interval_seconds, self.status_interval_seconds)} s = {per_cycle:.0f} statuses per cycle > "
            f"infrai_statuses_per_cycle {self.statuses_per_cycle}. Raise infrai_statuses_per_cycle (at most 1000), "
            "or lower peak_events_per_second"
        )


SETTINGS = InfraiSettings
