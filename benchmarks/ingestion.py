"""Delivery events through the real ingestion Lambdas, with provider events from the simulator.

Events are produced the way production produces them: messages are sent through the `api`
handler while the local simulator (local/simulator/) plays SES and SNS, so SES event
records arrive on the SES events queue as SNS envelopes and SMS delivery-status records are
written in SNS's log format. They are then handed to the handlers in the AWS event formats:

- SES: the `poller` handler with an SQS event of one record (push mode: exactly one event's
  apply, none of the scheduled cycle's fixed work);
- SMS: the `sms_delivery_logs` handler with a CloudWatch Logs subscription event of one record.

Each is applied once (new) and then once more unchanged (duplicate); the DynamoDB requests of
each invocation are counted. Throughput, and the CPU per applied event, is
benchmarks/throughput.py.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Callable
from typing import Any

import boto3

from benchmarks import ours
from benchmarks.aws import World, lambda_context, reset_caches
from benchmarks.counting import RequestLog, counting
from benchmarks.environment import ACCOUNT_ID, REGION

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


def _ledger() -> Any:
    from sendledger import bootstrap

    return bootstrap.runtime().messages


def _figure(log: RequestLog, label: str, answer: Any) -> dict[str, Any]:
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

        res = world.resources
        self.simulator = Simulator.install(
            region=REGION,
            account_id=ACCOUNT_ID,
            ses_topic_arn=res.ses_events_topic_arn,
            default_configuration_set=res.configuration_set,
            sms_success_log_group=res.sms_success_log_group,
            sms_failure_log_group=res.sms_failure_log_group,
        )
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


def _invoke_counted(
    handler: Callable[[dict[str, Any], Any], Any], event: dict[str, Any], name: str
) -> tuple[RequestLog, Any]:
    with counting(_ledger()) as log:
        answer = handler(event, lambda_context(name, 60.0))
    return log, answer


def measure_events(world: World) -> dict[str, Any]:
    """DynamoDB requests per new and per duplicate event, per source and event kind."""
    poller, poller_missing = load(POLLER)
    sms_logs, sms_missing = load(SMS_DELIVERY_LOGS)
    result: dict[str, Any] = {"ses": None, "sms": None, "notes": []}
    if poller is None and sms_logs is None:
        reasons = sorted([str(poller_missing), str(sms_missing)], key=lambda reason: not reason.startswith("error"))
        result["reason"] = "; ".join(reasons)  # an import error, if any, comes first: it fails the bar
        return result
    world.refresh_watermarks()
    provider = Provider(world)
    try:
        if poller is not None:
            result["ses"] = _ses_events(world, provider, poller.lambda_handler)
        else:
            result["ses"] = {"reason": poller_missing}
        if sms_logs is not None:
            result["sms"] = _sms_events(world, provider, sms_logs.lambda_handler)
        else:
            result["sms"] = {"reason": sms_missing}
        result["sendgrid"] = _sendgrid_events(world, provider)
        from benchmarks import mailgun  # its own simulator, over HTTP

        result["mailgun"] = mailgun.measure(world)
        from benchmarks import infrai  # pull only: its sends and its status lane

        result["infrai"] = infrai.measure(world, provider.simulator)
    finally:
        provider.close()
    return result


def _ses_events(world: World, provider: Provider, handler: Callable[..., Any]) -> dict[str, Any]:
    res = world.resources
    queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{res.ses_events_queue_url.rsplit('/', 1)[-1]}"
    for outcome, address in EMAIL_OUTCOMES.items():
        status, _, body = ours.post("/v1/messages", ours.email_body(address), key=f"events-{outcome}")
        if status != 202:
            raise RuntimeError(f"send to {address} failed: {status} {body}")
    provider.simulator.flush()
    messages = drain_queue(res.ses_events_queue_url)
    new: list[dict[str, Any]] = []
    duplicate: list[dict[str, Any]] = []
    for message in messages:
        event = sqs_event(message, queue_arn)
        kind = f"ses:{event_type(message['Body'])}"
        log, answer = _invoke_counted(handler, event, "sendledger-poller")
        _check_sqs_answer(answer, kind)
        new.append(_figure(log, kind, answer))
        log, answer = _invoke_counted(handler, event, "sendledger-poller")
        _check_sqs_answer(answer, kind)
        duplicate.append(_figure(log, kind, answer))
    if not new:
        raise RuntimeError("the simulator produced no SES events")
    return {"method": "poller handler, SQS event with one record (push mode)", "new": new, "duplicate": duplicate}


def _sendgrid_events(world: World, provider: Provider) -> dict[str, Any]:
    from benchmarks import sendgrid_events

    try:
        return sendgrid_events.measure(world, provider.simulator)
    except Exception as exc:  # its own figure: SES and SMS still count
        return {"reason": f"error: {type(exc).__name__}: {exc}"}


def _check_sqs_answer(answer: Any, kind: str) -> None:
    if isinstance(answer, dict) and answer.get("batchItemFailures"):
        raise RuntimeError(f"poller reported {kind} as failed: {answer}")


def _sms_events(world: World, provider: Provider, handler: Callable[..., Any]) -> dict[str, Any]:
    from benchmarks.traffic import receipt_writer, stream_records
    from sendledger.usecases.publish import write_sms_receipt

    with counting(ours._ledger()) as sent:
        for outcome, number in SMS_OUTCOMES.items():
            status, _, body = ours.post("/v1/messages", ours.sms_body(number), key=f"events-sms-{outcome}")
            if status != 202:
                raise RuntimeError(f"SMS to {number} failed: {status} {body}")
    # As deployed, the publisher writes each accepted SMS's receipt from the outcome's stream record
    # within about a second, before the carrier's status record is logged (uncounted: off this path).
    receipts = receipt_writer(world)
    for record in stream_records(sent):
        write_sms_receipt(record, receipts)
    deliveries: list[dict[str, Any]] = []
    provider.simulator.flush(deliver_sms=deliveries.append)
    new: list[dict[str, Any]] = []
    duplicate: list[dict[str, Any]] = []
    for event in deliveries:
        kind = f"sms:{sms_status(event)}"
        log, answer = _invoke_counted(handler, event, "sendledger-sms-delivery-logs")
        new.append(_figure(log, kind, answer))
        log, answer = _invoke_counted(handler, event, "sendledger-sms-delivery-logs")
        duplicate.append(_figure(log, kind, answer))
    if not new:
        raise RuntimeError("the simulator produced no SMS delivery-status records")
    return {
        "method": "sms_delivery_logs handler, CloudWatch Logs subscription event with one record",
        "new": new,
        "duplicate": duplicate,
    }


def sms_status(event: dict[str, Any]) -> str:
    from local.simulator import decode_subscription_event

    try:
        record = json.loads(decode_subscription_event(event)["logEvents"][0]["message"])
        return f"{record['status']}:{record['delivery']['providerResponse']}"
    except Exception:
        return "unknown"
