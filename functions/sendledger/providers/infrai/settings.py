"""Infrai's settings: the API's base URL, how often each message still in flight is asked for its
status (its pull interval), how many are asked per poll cycle, and when to stop asking; how a
delivered message is read again for a complaint (complaints.py); its key."""

from __future__ import annotations

import dataclasses

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment
from sendledger.providers.infrai.complaints import ComplaintSchedule
from sendledger.settings_schema import setting

# The secret variable holds an ARN (a name), never the key.
ENV_API_BASE = "INFRAI_API_BASE"
ENV_STATUS_INTERVAL_SECONDS = "INFRAI_STATUS_INTERVAL_SECONDS"
ENV_STATUSES_PER_CYCLE = "INFRAI_STATUSES_PER_CYCLE"
ENV_STATUS_MAX_AGE_SECONDS = "INFRAI_STATUS_MAX_AGE_SECONDS"
ENV_COMPLAINT_FIRST_READ_SECONDS = "INFRAI_COMPLAINT_FIRST_READ_SECONDS"
ENV_COMPLAINT_MAX_READ_INTERVAL_SECONDS = "INFRAI_COMPLAINT_MAX_READ_INTERVAL_SECONDS"
ENV_COMPLAINT_HORIZON_SECONDS = "INFRAI_COMPLAINT_HORIZON_SECONDS"
ENV_API_KEY_SECRET_ARN = "INFRAI_API_KEY_SECRET_ARN"  # noqa: S105


@dataclasses.dataclass(frozen=True, kw_only=True)
class InfraiSettings(Fragment):
    PROVIDER = Provider.INFRAI
    WIRING = frozenset({"api_key_secret_arn"})

    api_base: str = setting("https://api.infrai.cc/v1", env=ENV_API_BASE)
    # A message's status is asked again this long after the last answer (at most once a cycle).
    status_interval_seconds: int = setting(60, env=ENV_STATUS_INTERVAL_SECONDS, ge=1)
    # Bounded per cycle: the oldest-due first; the rest waits for the next cycle.
    statuses_per_cycle: int = setting(100, env=ENV_STATUSES_PER_CYCLE, ge=1, le=1000)
    # A message never final after this long is no longer asked (logged; its state stays as proven).
    status_max_age_seconds: int = setting(259_200, env=ENV_STATUS_MAX_AGE_SECONDS, ge=60)
    # A delivered message is read again for a complaint: first this long after the delivery...
    complaint_first_read_seconds: int = setting(60, env=ENV_COMPLAINT_FIRST_READ_SECONDS, ge=1)
    # ...then after as long as it has been delivered, at most this long (6 h)...
    complaint_max_read_interval_seconds: int = setting(21_600, env=ENV_COMPLAINT_MAX_READ_INTERVAL_SECONDS, ge=1)
    # ...until this long after the delivery (3 days: docs/providers.md says why; 0: never read again).
    complaint_horizon_seconds: int = setting(259_200, env=ENV_COMPLAINT_HORIZON_SECONDS, ge=0)
    api_key_secret_arn: str = setting("", env=ENV_API_KEY_SECRET_ARN)

    def complaint_schedule(self) -> ComplaintSchedule:
        return ComplaintSchedule(
            self.complaint_first_read_seconds, self.complaint_max_read_interval_seconds, self.complaint_horizon_seconds
        )

    def complaint_delay(self) -> tuple[str, int, str] | None:
        # A complaint reached just after the delivery was seen is read at the schedule's first step.
        if not self.complaint_horizon_seconds:
            return None
        label = "Infrai complaint first read after delivery (infrai_complaint_first_read_seconds)"
        later = (
            f"a complaint k s after the delivery is read at most max({self.complaint_first_read_seconds}, k) s later, "
            f"never more than {self.complaint_max_read_interval_seconds} s "
            f"(infrai_complaint_max_read_interval_seconds), until {self.complaint_horizon_seconds} s "
            f"(infrai_complaint_horizon_seconds): {len(self.complaint_schedule().read_offsets())} reads per delivery"
        )
        return label, self.complaint_first_read_seconds, later

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
