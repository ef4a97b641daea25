"""The traffic mix's delivery events are the ones a deployment of ours sees, in the order it sees them."""

import json
import random
from pathlib import Path

from benchmarks import traffic_events
from sendledger.providers.sns.events import encode_subscription_event

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "aws-formats"


def test_the_sampled_events_keep_their_arrival_order():
    # Each message's Send arrives before its Delivery; a shuffled sample would apply some
    # Deliveries first and bill their Sends a turned-away write no deployment pays.
    arrived = [(message, kind) for message in range(200) for kind in ("Send", "Delivery")]
    sample = traffic_events.in_arrival_order(random.Random(7), arrived, 240)

    assert len(set(sample)) == 240
    positions = [arrived.index(event) for event in sample]
    assert positions == sorted(positions)
    both = {m for m, kind in sample if kind == "Delivery"} & {m for m, kind in sample if kind == "Send"}
    assert both  # the seed draws pairs, so the order is exercised
    assert all(sample.index((m, "Send")) < sample.index((m, "Delivery")) for m in both)


def test_the_sample_is_the_seeds():
    arrived = list(range(500))
    assert traffic_events.in_arrival_order(random.Random(3), arrived, 50) == traffic_events.in_arrival_order(
        random.Random(3), arrived, 50
    )


def test_an_event_is_told_from_the_baselines_by_the_provider_message_id_it_names():
    # The baseline's sends go through the same simulated providers; their events are left out by
    # the id the provider gave the send, read from the formats AWS delivers.
    envelope = (FORMATS / "sqs-body-sns-envelope-ses-bounce.json").read_text()
    ses_id = json.loads(json.loads(envelope)["Message"])["mail"]["messageId"]
    assert traffic_events.ses_provider_id({"Body": envelope}) == ses_id

    record = (FORMATS / "sns-sms-delivery-success.json").read_text()
    event = encode_subscription_event({"logEvents": [{"id": "1", "timestamp": 0, "message": record}]})
    assert traffic_events.sms_provider_id(event) == json.loads(record)["notification"]["messageId"]
