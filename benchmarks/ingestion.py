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

from collections.abc import Callable
from typing import Any

from benchmarks import ours
from benchmarks.aws import World, lambda_context
from benchmarks.counting import RequestLog, counting
from benchmarks.environment import ACCOUNT_ID, REGION
from benchmarks.event_feed import (
    EMAIL_OUTCOMES,
    POLLER,
    SMS_DELIVERY_LOGS,
    SMS_OUTCOMES,
    Provider,
    drain_queue,
    event_figure,
    event_type,
    load,
    sms_status,
    sqs_event,
)
from benchmarks.stream import receipt_writer, stream_records


def _invoke_counted(
    handler: Callable[[dict[str, Any], Any], Any], event: dict[str, Any], name: str
) -> tuple[RequestLog, Any]:
    with counting(ours.ledger()) as log:
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
        new.append(event_figure(log, kind, answer))
        log, answer = _invoke_counted(handler, event, "sendledger-poller")
        _check_sqs_answer(answer, kind)
        duplicate.append(event_figure(log, kind, answer))
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
    from sendledger.usecases.publish import write_sms_receipt

    with counting(ours.ledger()) as sent:
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
        new.append(event_figure(log, kind, answer))
        log, answer = _invoke_counted(handler, event, "sendledger-sms-delivery-logs")
        duplicate.append(event_figure(log, kind, answer))
    if not new:
        raise RuntimeError("the simulator produced no SMS delivery-status records")
    return {
        "method": "sms_delivery_logs handler, CloudWatch Logs subscription event with one record",
        "new": new,
        "duplicate": duplicate,
    }
