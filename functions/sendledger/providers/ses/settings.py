"""SES's settings: the configuration set every send names, and the queue its events arrive on."""

from __future__ import annotations

import dataclasses

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment
from sendledger.settings_schema import setting

ENV_CONFIGURATION_SET = "SES_CONFIGURATION_SET"
ENV_EVENTS_QUEUE_URL = "SES_EVENTS_QUEUE_URL"
ENV_EVENTS_TOPIC_ARN = "SES_EVENTS_TOPIC_ARN"
CONFIGURATION_SET_PREFIX = "sendledger-events"  # deployed as f"{prefix}-{stage}"; bare locally


@dataclasses.dataclass(frozen=True, kw_only=True)
class SesSettings(Fragment):
    PROVIDER = Provider.SES
    WIRING = frozenset({"configuration_set", "events_queue_url", "events_topic_arn"})

    configuration_set: str = setting(CONFIGURATION_SET_PREFIX, env=ENV_CONFIGURATION_SET)
    # Configuration-set event publishing -> the events topic -> this queue; empty: no SES events are read.
    events_queue_url: str = setting("", env=ENV_EVENTS_QUEUE_URL)
    # The topic whose notification envelopes the queue carries: a body naming another one (or none) is
    # refused, not applied. Empty: not checked (a queue fed by hand in a test).
    events_topic_arn: str = setting("", env=ENV_EVENTS_TOPIC_ARN)

    def event_delay(self) -> tuple[str, int]:
        # Event publishing to the topic and on to SQS: typically seconds; 30 s leaves margin for retries.
        return "SES delivery delay", 30


SETTINGS = SesSettings
