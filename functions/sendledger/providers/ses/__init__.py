"""SES (email): SESv2 SendEmail with the configuration set and two message tags; its events by
configuration-set event publishing → a topic → SQS, drained by the poller (or pushed to it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sendledger.domain.provider import Provider, channels_of, source_of
from sendledger.providers.base import SliceBase

if TYPE_CHECKING:
    from sendledger.ports.providers import EmailSender, EventLane, Simulation
    from sendledger.settings import Settings

NAME = Provider.SES.value
SOURCE = source_of(NAME)
# Every send's message tags, back on each of its events: the sendledger message id proves
# acceptance of a timed-out call; "1"/"0" says whether the message escalates, so a failure of
# one that does not leaves no marker for the poller.
MESSAGE_ID_TAG = "sendledger-message-id"
ESCALATES_TAG = "sendledger-escalates"


class Ses(SliceBase):
    name, source, channels = NAME, SOURCE, channels_of(NAME)

    def email_sender(self, settings: Settings) -> EmailSender:
        from sendledger.providers.ses.sender import SesEmailSender
        from sendledger.providers.ses.settings import SesSettings

        return SesEmailSender(settings.sender_email, settings.provider(SesSettings).configuration_set)

    def lanes(self, settings: Settings) -> list[EventLane]:
        from functools import partial

        from sendledger.adapters.sqs import SqsEventQueue
        from sendledger.providers.ses.events import parse_sqs_body
        from sendledger.providers.ses.settings import SesSettings
        from sendledger.usecases.queued_events import QueueLane

        fragment = settings.provider(SesSettings)
        if not fragment.events_queue_url:
            return []
        parse = partial(parse_sqs_body, topic_arn=fragment.events_topic_arn)
        return [QueueLane(NAME, SOURCE, SqsEventQueue(fragment.events_queue_url), parse, pushable=True)]

    def simulation(self, settings: Settings) -> Simulation:
        import os

        from sendledger.providers.ses.settings import SesSettings
        from sendledger.providers.ses.simulation import SesSimulation, queue_account

        # Where the records say the send happened: this deployment's region and account.
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return SesSimulation(
            settings.sender_email,
            settings.provider(SesSettings).configuration_set,
            region,
            queue_account(settings.test_outcomes_queue_url),
        )


SLICE = Ses()
