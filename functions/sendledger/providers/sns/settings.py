"""SNS's settings (SMS): the delivery-status log groups SNS writes and the poller reconciles."""

from __future__ import annotations

import dataclasses

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment
from sendledger.settings_schema import setting

ENV_SUCCESS_LOG_GROUP = "SMS_SUCCESS_LOG_GROUP"
ENV_FAILURE_LOG_GROUP = "SMS_FAILURE_LOG_GROUP"
# SNS writes SMS delivery-status logs to sns/{region}/{account}/ + these; the names are not ours to pick.
SUCCESS_LOG_GROUP_SUFFIX = "DirectPublishToPhoneNumber"
FAILURE_LOG_GROUP_SUFFIX = "DirectPublishToPhoneNumber/Failure"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SnsSettings(Fragment):
    PROVIDER = Provider.SNS
    WIRING = frozenset({"success_log_group", "failure_log_group"})

    success_log_group: str = setting("", env=ENV_SUCCESS_LOG_GROUP)
    failure_log_group: str = setting("", env=ENV_FAILURE_LOG_GROUP)

    def event_delay(self) -> tuple[str, int]:
        # A status record reaches CloudWatch Logs, and the subscription, within seconds of SNS writing it.
        return "SNS delivery-status log delay", 30

    @property
    def log_groups(self) -> list[str]:
        return [group for group in (self.success_log_group, self.failure_log_group) if group]


SETTINGS = SnsSettings
