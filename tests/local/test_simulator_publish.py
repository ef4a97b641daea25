"""The simulator publishes SES events ten per PublishBatch, in order, keeping what did not go out."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from local.simulator.providers import ses
from sendledger.domain.clock import iso
from tests.local.local_support import START

TOPIC = "arn:aws:sns:us-east-1:123456789012:sendledger-ses-events"


def ids(sns: FakeSns) -> list[str]:
    return [message["mail"]["messageId"] for message in sns.messages]


def records(count: int) -> list[ses.TimedRecord]:
    return [(START, {"eventType": "Send", "mail": {"messageId": f"m{i}"}, "send": {}}) for i in range(count)]


class FakeSns:
    """PublishBatch as SNS answers it; ``refuse``: entry Ids to report Failed; ``raise_on``: call numbers."""

    def __init__(self, refuse: frozenset[str] = frozenset(), raise_on: frozenset[int] = frozenset()) -> None:
        self.messages: list[dict[str, Any]] = []
        self.calls = 0
        self.refuse, self.raise_on = refuse, raise_on

    def publish_batch(self, TopicArn: str, PublishBatchRequestEntries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls += 1
        assert TopicArn == TOPIC and len(PublishBatchRequestEntries) <= ses.SNS_BATCH_LIMIT
        if self.calls in self.raise_on:
            raise ConnectionError("endpoint unreachable")
        ok = [e for e in PublishBatchRequestEntries if e["Id"] not in self.refuse]
        self.messages += [json.loads(e["Message"]) for e in ok]
        failed = [{"Id": e["Id"], "Code": "InternalError", "SenderFault": False} for e in PublishBatchRequestEntries]
        return {
            "Successful": [{"Id": e["Id"]} for e in ok],
            "Failed": [f for f in failed if f["Id"] in self.refuse],
        }


def test_every_event_goes_out_in_order_ten_at_a_time() -> None:
    sns = FakeSns()
    assert ses.publish_events(sns, TOPIC, records(23), START) == (23, [])
    assert ids(sns) == [f"m{i}" for i in range(23)]
    assert sns.calls == 3


def test_a_failed_call_keeps_its_batch_and_everything_after_it() -> None:
    sns = FakeSns(raise_on=frozenset({2}))
    batch = records(23)
    assert ses.publish_events(sns, TOPIC, batch, START) == (10, batch[10:])
    assert ids(sns) == [f"m{i}" for i in range(10)]


def test_a_refused_entry_is_kept_with_everything_after_it() -> None:
    sns = FakeSns(refuse=frozenset({"3"}))
    batch = records(8)
    published, kept = ses.publish_events(sns, TOPIC, batch, START)
    assert (published, kept) == (3, batch[3:])  # the entries after it are sent again: SNS delivers at least once


def test_an_event_later_than_its_emission_is_clamped_to_it() -> None:
    sns = FakeSns()
    later = START + timedelta(seconds=30)
    record = {"eventType": "Delivery", "mail": {"messageId": "m"}, "delivery": {"timestamp": "2099-01-01T00:00:00Z"}}
    ses.publish_events(sns, TOPIC, [(later, record)], START)
    assert sns.messages[0]["delivery"]["timestamp"] == iso(START)
