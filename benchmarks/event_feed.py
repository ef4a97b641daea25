"""Delivery events as AWS hands them to the ingestion handlers, for the benchmarks that apply them.

The simulator hooked into boto3 plays SES and SNS (`Provider`); SES records are drained from
their queue and wrapped as an SQS event source mapping's event; SMS status records arrive as
CloudWatch Logs subscription events. `event_figure` is what one applied event cost.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from typing import Any

import boto3

from benchmarks.aws import World, reset_caches
from benchmarks.counting import RequestLog
from benchmarks.environment import REGION

POLLER = "sendledger.handlers.poller"
SMS_DELIVERY_LOGS = "sendledger.handlers.sms_delivery_logs"

# One address / number per provider outcome the simulator can produce.
EMAIL_OUTCOMES = {
    "delivered": "bench-delivered@example.com",
    "bounce": "bounce@simulator.amazonses.com",
    "complaint": "complaint@simulator.amazonses.com",
}
SMS_OUTCOMES = {
    "delivered": "+12065550100",
    "carrier_unavailable": "+12065550150",
    "invalid_number": "+12065550160",
}


def load(module: str) -> tuple[Any | None, str | None]:
    """The handler module, or why not: "not available" only when the module does not exist."""
    try:
        return importlib.import_module(module), None
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None, f"not available: {module} is missing"
        return None, f"error: {module} does not import ({type(exc).__name__}: {exc})"
    except Exception as exc:
        return None, f"error: {module} does not import ({type(exc).__name__}: {exc})"


def event_figure(log: RequestLog, label: str, answer: Any) -> dict[str, Any]:
    return {
        "event": label,
        "requests": log.total,
        "operations": log.summary(),
        "write_request_units": sum(r.capacity.get("write_request_units", 0.0) for r in log.requests),
        "read_request_units": sum(r.capacity.get("read_request_units", 0.0) for r in log.requests),
        "prepare_only_write_request_units": sum(
            r.capacity.get("prepare_only_write_request_units", 0.0) for r in log.requests
        ),
        "changes_suppression": any(_writes_suppression(request) for request in log.requests),
        "handler_answer": answer,
    }


def _writes_suppression(request: Any) -> bool:
    """A write (put, update or delete, alone or in a transaction) of a suppression state item."""
    if request.operation in ("PutItem", "UpdateItem", "DeleteItem"):
        actions = [request.params]
    elif request.operation == "TransactWriteItems":
        actions = [
            body
            for action in request.params.get("TransactItems", [])
            for kind, body in action.items()
            if kind != "ConditionCheck"
        ]
    else:
        return False
    for body in actions:
        key = body.get("Item") or body.get("Key") or {}
        pk, sk = (key.get("pk") or {}).get("S", ""), (key.get("sk") or {}).get("S", "")
        if pk.startswith("SUP#") and sk == "STATE":
            return True
    return False


class Provider:
    """The simulator hooked into boto3's default session for the duration of the block."""

    def __init__(self, world: World) -> None:
        from local.simulator import Simulator

        self.simulator = Simulator.install(**world.resources.simulator_targets())
        reset_caches()  # SES/SNS clients are rebuilt after the hooks: the simulator sees them

    def close(self) -> None:
        self.simulator.uninstall()
        reset_caches()


def drain_queue(queue_url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name=REGION)
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])
        if not batch:
            return messages
        messages += batch
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)],
        )


def sqs_event(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """The Lambda event of an SQS event source mapping, one record (AWS format)."""
    body = message["Body"]
    now_ms = str(int(time.time() * 1000))
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": now_ms,
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": now_ms,
                },
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(body.encode("utf-8")).hexdigest(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            }
        ]
    }


def event_type(body: str) -> str:
    try:
        return str(json.loads(json.loads(body)["Message"])["eventType"])
    except Exception:
        return "unknown"


def sms_status(event: dict[str, Any]) -> str:
    from local.simulator import decode_subscription_event

    try:
        record = json.loads(decode_subscription_event(event)["logEvents"][0]["message"])
        return f"{record['status']}:{record['delivery']['providerResponse']}"
    except Exception:
        return "unknown"
