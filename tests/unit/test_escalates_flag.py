"""The escalates flag a send gives SES or SendGrid comes back on that provider's events.

Mailgun is not given it: its user variables are copied into the delivered mail's headers.

It decides whether a failure leaves a marker for the poller (adapters/dynamodb/events.py):
"1" and "0" are the only values a send writes; anything else, or nothing, leaves the answer
to the poller, which reads the message.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from sendledger.domain.events import DeliveryEvent
from sendledger.providers.sendgrid import events as sendgrid_events
from sendledger.providers.ses import ESCALATES_TAG as SES_ESCALATES_TAG
from sendledger.providers.ses import events as ses_events
from tests.support.fixtures import aws_format
from tests.support.provider_fixtures import provider_format


def ses(flag: str | None) -> DeliveryEvent:
    record = copy.deepcopy(aws_format("ses-bounce-permanent.json"))
    if flag is not None:
        record["mail"]["tags"][SES_ESCALATES_TAG] = [flag]
    [event] = ses_events.parse_ses_record(record)
    return event


def sendgrid(flag: str | None) -> DeliveryEvent:
    record = next(dict(e) for e in provider_format("sendgrid-event-webhook.json") if e["event"] == "bounce")
    if flag is not None:
        record[sendgrid_events.ESCALATES_ARG] = flag  # custom arguments come back at the top level
    event = sendgrid_events.parse_event(record)
    assert event is not None
    return event


PARSERS: list[Callable[[str | None], DeliveryEvent]] = [ses, sendgrid]


@pytest.mark.parametrize("parse", PARSERS, ids=lambda p: p.__name__)
@pytest.mark.parametrize(("flag", "escalates"), [("1", True), ("0", False), (None, None), ("yes", None)])
def test_each_provider_event_carries_the_flag_back(
    parse: Callable[[str | None], DeliveryEvent], flag: str | None, escalates: bool | None
) -> None:
    event = parse(flag)
    assert event.escalates is escalates
    assert event.message_id  # the flag rides beside our message id, it does not replace it
