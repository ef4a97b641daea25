"""Events in the formats AWS delivers them, built from the reference samples (no emulator needed).

For the sections that run against the canned endpoint (cold start, drain, ingestion CPU): SES
events as the SES events queue holds them (SNS envelopes), a CloudWatch Logs subscription
event of SMS delivery-status records, a DynamoDB Stream batch of a send's state changes, and
the API Gateway event of a send.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.environment import ACCOUNT_ID, REGION
from tests.support.fixtures import aws_format

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
STREAM_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/sendledger-ledger/stream/2026-01-01T00:00:00.000"


def message_id(rng: random.Random) -> str:
    return "msg_" + "".join(rng.choice(CROCKFORD) for _ in range(26))


def ses_bodies(count: int, event_type: str = "Delivery", seed: int = 7) -> list[str]:
    """SQS message bodies of `count` SES events of distinct messages and recipients."""
    rng = random.Random(seed)
    sample = aws_format(f"ses-{event_type.lower()}.json")
    envelope = aws_format("sqs-body-sns-envelope-ses-bounce.json")
    bodies = []
    for index in range(count):
        event = copy.deepcopy(sample)
        event["mail"]["messageId"] = f"0100018c{uuid.UUID(int=rng.getrandbits(128)).hex}-000000"
        event["mail"]["tags"]["sendledger-message-id"] = [message_id(rng)]
        recipient = f"reader{index}.{rng.getrandbits(24):06x}@example.com"
        event["mail"]["destination"] = [recipient]
        if "delivery" in event:
            event["delivery"]["recipients"] = [recipient]
        wrapped = {**envelope, "MessageId": str(uuid.UUID(int=rng.getrandbits(128))), "Message": json.dumps(event)}
        bodies.append(json.dumps(wrapped))
    return bodies


def sms_subscription_event(count: int = 5, seed: int = 11) -> dict[str, Any]:
    """A subscription event of `count` SNS SMS delivery-status records (successes)."""
    rng = random.Random(seed)
    record = aws_format("sns-sms-delivery-success.json")
    decoded = aws_format("cloudwatch-logs-subscription-decoded.json")
    events = []
    for index in range(count):
        entry = copy.deepcopy(record)
        entry["notification"]["messageId"] = str(uuid.UUID(int=rng.getrandbits(128)))
        entry["delivery"]["destination"] = f"+1206555010{index % 10}"
        events.append(
            {"id": str(rng.getrandbits(120)), "timestamp": 1767225600000 + index, "message": json.dumps(entry)}
        )
    from local.constants import sms_log_groups

    success_group, _ = sms_log_groups()
    batch = {
        **decoded,
        "logGroup": success_group,
        "subscriptionFilters": ["sendledger-sms-success"],
        "logEvents": events,
    }
    data = base64.b64encode(gzip.compress(json.dumps(batch).encode())).decode()
    return {"awslogs": {"data": data}}


def stream_batch(count: int = 3, seed: int = 13) -> dict[str, Any]:
    """A DynamoDB Stream batch (NEW_AND_OLD_IMAGES): sends moving from `sending` to `accepted`."""
    from sendledger.adapters.dynamodb.expressions import encode_item

    rng = random.Random(seed)
    at = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
    records = []
    for index in range(count):
        mid = message_id(rng)
        created = at + timedelta(seconds=index)
        stamp = int(created.timestamp() * 1000)
        old = {
            "pk": f"MSG#{mid}",
            "sk": "MSG",
            "channel": "email",
            "recipient": f"reader{index}@example.com",
            "template_id": "alert",
            "template_version": "1",
            "category": "transactional",
            "created_at": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "updated_at": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "state": "sending",
            "owner": "0123456789abcdef01234567",
            f"h:{stamp:013d}.00.AAAAAAAAAAAA": json.dumps({"t": "intent", "s": "sending"}),
        }
        new = {
            **old,
            "state": "accepted",
            "provider_message_id": f"0100018c{uuid.UUID(int=rng.getrandbits(128)).hex}-000000",
            f"h:{stamp + 40:013d}.01.BBBBBBBBBBBB": json.dumps({"t": "provider_outcome", "s": "accepted"}),
        }
        records.append(
            {
                "eventID": str(index + 1),
                "eventName": "MODIFY",
                "eventVersion": "1.1",
                "eventSource": "aws:dynamodb",
                "awsRegion": REGION,
                "dynamodb": {
                    "ApproximateCreationDateTime": int(created.timestamp()),
                    "Keys": {"pk": {"S": f"MSG#{mid}"}, "sk": {"S": "MSG"}},
                    "OldImage": encode_item(old),
                    "NewImage": encode_item(new),
                    "SequenceNumber": str(100 + index),
                    "SizeBytes": 600,
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
                "eventSourceARN": STREAM_ARN,
            }
        )
    return {"Records": records}


def send_event(key: str = "2f42b776-9e2e-4038-8c56-8e855491f650") -> dict[str, Any]:
    from benchmarks.aws import api_event

    body = {
        "channel": "email",
        "to": "jonathan.whitmore@northwind-logistics.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk full on db-1: 97% used, writes failing since 14:02 UTC"},
    }
    return api_event("POST", "/v1/messages", body, {"Idempotency-Key": key})


def scheduled_event() -> dict[str, Any]:
    from local.scheduler import scheduled_event as scheduled

    return scheduled(now=datetime.now(UTC), region=REGION, account_id=ACCOUNT_ID)
