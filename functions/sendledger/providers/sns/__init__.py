"""SNS (SMS): Publish straight to a phone number; its delivery-status logs reach the one apply
routine by a CloudWatch Logs subscription (handlers/sms_delivery_logs.py) and by the poller's
FilterLogEvents reconciliation from a cursor (lane.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.provider import Provider, channels_of, source_of
from sendledger.providers.base import SliceBase

if TYPE_CHECKING:
    from sendledger.ports.providers import EventLane, Simulation, SmsSender
    from sendledger.settings import Settings

NAME = Provider.SNS.value
SOURCE = source_of(NAME)


class Sns(SliceBase):
    name, source, channels = NAME, SOURCE, channels_of(NAME)

    def sms_sender(self, settings: Settings) -> SmsSender:
        from sendledger.providers.sns.sender import SnsSmsSender

        return SnsSmsSender()

    def lanes(self, settings: Settings) -> list[EventLane]:
        from sendledger.providers.sns.lane import LogLane
        from sendledger.providers.sns.logs import CloudWatchLogReader
        from sendledger.providers.sns.settings import SnsSettings

        groups = settings.provider(SnsSettings).log_groups
        return [LogLane(CloudWatchLogReader(), groups)] if groups else []

    def simulation(self, settings: Settings) -> Simulation:
        from sendledger.providers.sns.simulation import SnsSimulation

        return SnsSimulation()


SLICE = Sns()
