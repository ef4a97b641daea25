"""The whole bill per million sends, from the counted and measured figures and AWS list prices.

Every AWS line a send causes, itemised: the front door, each Lambda it wakes (api, poller,
publisher, SMS logs, callbacks when configured), DynamoDB at the traffic model's p95 units,
the provider, the SES event fan-out (SNS, SQS), EventBridge status events, CloudWatch Logs
ingestion of the log bytes measured per send and per event, X-Ray at its sampling rate.
"Overhead" is everything but the provider's own price. Per-provider figures (price, events per
send) are in PROVIDERS: a new provider is a new entry there.

A `Deployment` names the choices the bill depends on (the front door, how SES events reach the
poller, the log bytes per send); DEPLOYED is the stack as infra/ builds it, and LEVERS are the
changes issue 36 weighs, each priced from the same run's inputs (benchmarks/cost_report.py
shows each one's saving and what it gives up).
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

PRICES: dict[str, Any] = {
    "as_of": "2026-12-03",
    "region": "us-east-1 on-demand list prices",
    "dynamodb_write_request_unit_per_million": 0.625,
    "dynamodb_read_request_unit_per_million": 0.125,
    "lambda_arm64_per_gb_second": 0.0000133334,
    "lambda_per_million_requests": 0.20,
    "api_gateway_rest_per_million_requests": 3.50,
    "api_gateway_http_per_million_requests": 1.00,
    "ses_per_thousand_emails": 0.10,
    "sns_sms_us_per_message": 0.00581,
    "sns_sms_note": "plus US carrier fees, not included",
    "sns_publish_per_million": 0.50,
    "sns_to_sqs_delivery_per_million": 0.0,  # SNS charges nothing for deliveries to SQS
    "sqs_per_million_requests": 0.40,
    "eventbridge_custom_events_per_million": 1.00,
    # An SES event destination publishes to the default bus: events from AWS services there are free.
    "eventbridge_aws_service_events_per_million": 0.0,
    "cloudwatch_logs_ingestion_per_gb": 0.50,
    "xray_traces_recorded_per_million": 5.00,
}

# Lambda bills wall time: the measured CPU plus the in-region round trip of each AWS call it
# waits for (assumed: the benchmark cannot measure AWS).
ASSUMED_LATENCY_MS = {
    "TransactWriteItems": 15.0,
    "GetItem": 5.0,
    "PutItem": 6.0,
    "UpdateItem": 6.0,
    "Query": 6.0,
    "BatchGetItem": 6.0,
    "SendEmail": 40.0,
    "Publish": 40.0,
    "PutEvents": 20.0,
    "ReceiveMessage": 10.0,
    "DeleteMessageBatch": 10.0,
}
MEMORY_GB = {"api": 0.5, "poller": 0.5, "sms_delivery_logs": 0.25, "publisher": 0.25, "callbacks": 0.25}
SQS_BATCH = 10  # the poller receives and deletes ten at a time
STREAM_BATCH = 100  # the publisher's event source batch size
CALLBACK_POST_MS = 60.0  # a callback POST to the caller's endpoint, assumed
LAMBDA_LOG_LINES_BYTES = 330  # START, END and REPORT: Lambda's own lines per invocation
XRAY_SAMPLED = 0.05  # the default sampling rule: the first request each second, then 5%

# Per provider: its price per message, the events each message causes (measured in the
# traffic run from what the simulator publishes), and how those events arrive.
PROVIDERS: dict[str, dict[str, Any]] = {
    "email": {"provider": "ses", "price_per_message": PRICES["ses_per_thousand_emails"] / 1000, "fan_out": "sns_sqs"},
    "sms": {"provider": "sns", "price_per_message": PRICES["sns_sms_us_per_message"], "fan_out": "logs_subscription"},
}


ALL_SES_EVENTS = ("Send", "Delivery", "Bounce", "Complaint", "Reject", "DeliveryDelay")  # infra/providers/ses.py


class FrontDoor(StrEnum):
    REST = "rest"  # REST API, IAM on every method
    HTTP = "http"  # HTTP API, IAM authorization per route


class SesRoute(StrEnum):
    SNS_SQS = "sns_sqs"  # configuration-set event destination -> SNS topic -> SQS
    EVENTBRIDGE_SQS = "eventbridge_sqs"  # event destination -> the default event bus -> a rule -> SQS


@dataclass(frozen=True)
class Deployment:
    """What the bill depends on besides the measured figures."""

    front_door: FrontDoor = FrontDoor.REST
    ses_route: SesRoute = SesRoute.SNS_SQS
    ses_events: tuple[str, ...] = ALL_SES_EVENTS  # the configuration set's published event types
    log_bytes_per_send: float | None = None  # None: as measured; else every log line of a send, in all


DEPLOYED = Deployment()
# The levers of issue 36, applied one after the other (each row's saving is over the row above).
_HTTP = replace(DEPLOYED, front_door=FrontDoor.HTTP)
_EVENTBRIDGE = replace(_HTTP, ses_route=SesRoute.EVENTBRIDGE_SQS)
_NO_SEND = replace(_EVENTBRIDGE, ses_events=("Delivery", "Bounce", "Complaint"))
LEVERS: tuple[tuple[str, Deployment], ...] = (
    ("HTTP API with IAM authorization instead of REST", _HTTP),
    ("SES events through EventBridge to SQS instead of SNS", _EVENTBRIDGE),
    ("SES events: Delivery, Bounce and Complaint only (no Send event)", _NO_SEND),
    ("about 1 KB of logs per send", replace(_NO_SEND, log_bytes_per_send=1024)),
)


def lambda_usd(function: str, duration_ms: float, invocations: float) -> float:
    """A million sends' share of one function: `duration_ms` of it each, `invocations` of it each."""
    seconds = math.ceil(duration_ms) / 1000 if duration_ms else 0.0
    compute = MEMORY_GB[function] * seconds * PRICES["lambda_arm64_per_gb_second"] * 1_000_000
    return compute + invocations * PRICES["lambda_per_million_requests"]


def lambda_compute_usd_per_million(function: str, duration_ms: float) -> float:
    """What a million invocations' `duration_ms` each cost in compute alone."""
    return MEMORY_GB[function] * duration_ms / 1000 * PRICES["lambda_arm64_per_gb_second"] * 1_000_000


def _ddb(wru: float, rru: float) -> float:
    return (
        wru * PRICES["dynamodb_write_request_unit_per_million"] + rru * PRICES["dynamodb_read_request_unit_per_million"]
    )


def _logs(bytes_per_send: float) -> float:
    return bytes_per_send * 1_000_000 / 1024**3 * PRICES["cloudwatch_logs_ingestion_per_gb"]


def access_log_format() -> dict[str, str]:
    """The stack's access log format, read from infra/api.py's source (importing it would start CDK)."""
    source = Path(__file__).resolve().parent.parent / "infra" / "api.py"
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_ACCESS_LOG_FORMAT" for t in node.targets):
            found: dict[str, str] = ast.literal_eval(node.value)
            return found
    raise LookupError("infra/api.py no longer defines _ACCESS_LOG_FORMAT")


def access_log_bytes() -> int:
    """One API Gateway access log line in the stack's format, with typical values."""

    typical = {
        "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
        "requestTime": "01/Dec/2026:14:30:01 +0000",
        "httpMethod": "POST",
        "resourcePath": "/v1/messages",
        "status": "202",
        "responseLength": "412",
        "integrationLatency": "71",
        "ip": "203.0.113.17",
        "caller": "AROAEXAMPLEID:app-session",
        "userArn": "arn:aws:sts::123456789012:assumed-role/app-prod/app-session",
        "errorMessage": "-",
        "xrayTraceId": "Root=1-67891233-abcdef012345678912345678",
    }
    return len(json.dumps({name: typical.get(name, "-") for name in access_log_format()})) + 1


def events_per_send(channel: str, inputs: dict[str, Any], deployment: Deployment) -> float:
    """Provider events per send that reach the poller: SES's only of the published types."""
    measured = float(inputs["events_per_send"][channel])
    by_type = inputs.get("ses_events_per_send") or {}
    if PROVIDERS[channel]["fan_out"] != "sns_sqs" or not by_type:
        return measured
    return sum(float(n) for kind, n in by_type.items() if kind in deployment.ses_events)


def bill(
    channel: str, inputs: dict[str, Any], deployment: Deployment = DEPLOYED, callbacks: bool = False
) -> dict[str, Any]:
    """USD per million sends on `channel`; `inputs` are the run's measured figures (figures.py)."""
    provider = PROVIDERS[channel]
    send = inputs["send"][channel]
    event = inputs["event"]
    events = events_per_send(channel, inputs, deployment)
    dropped = float(inputs["events_per_send"][channel]) - events  # events no longer published
    status_events = float(inputs["status_events_per_send"][channel])  # a Send event moves no state
    stream_records = float(inputs["stream_records_per_send"][channel]) - dropped  # one receipt write per event
    items: dict[str, float] = {}
    front_door = deployment.front_door
    gateway = f"api_gateway_{front_door.value}_per_million_requests"
    items["api_gateway"] = PRICES[gateway]
    items["lambda_api"] = lambda_usd("api", send["duration_ms"], 1.0)
    items["dynamodb_send"] = _ddb(send["wru_p95"], send["rru_p95"])
    items["provider"] = provider["price_per_message"] * 1_000_000
    if provider["fan_out"] == "sns_sqs":
        # SES publishes each event to SNS (or to the default event bus), which delivers it to SQS
        # (one SendMessage); the poller receives and deletes in batches, invoked per schedule.
        if deployment.ses_route is SesRoute.SNS_SQS:
            items["sns_publish"] = events * PRICES["sns_publish_per_million"]
        else:
            items["eventbridge_ses_events"] = events * PRICES["eventbridge_aws_service_events_per_million"]
        items["sqs"] = events * (1 + 2 / SQS_BATCH) * PRICES["sqs_per_million_requests"]
        items["lambda_poller"] = lambda_usd("poller", event["duration_ms"] * events, 0.0)
    else:
        # SNS writes each delivery-status record to CloudWatch Logs; a subscription invokes the
        # SMS handler (once per record at worst).
        items["sms_status_logs"] = _logs(events * inputs["sms_status_record_bytes"])
        items["lambda_sms_delivery_logs"] = lambda_usd("sms_delivery_logs", event["duration_ms"] * events, events)
    items["dynamodb_events"] = events * _ddb(event["wru_p95"], event["rru_p95"])
    items["eventbridge"] = status_events * PRICES["eventbridge_custom_events_per_million"]
    # The publisher spends its CPU on every record and waits for one PutEvents per status event,
    # and for the UpdateItem of each `allow` send's eligibility label (decision 1 of issue #36).
    labels = inputs.get("labels_per_send", {}).get(channel, 0.0)
    receipts = inputs.get("sms_receipts_per_send", {}).get(channel, 0.0)  # decision 2: SMS receipts
    publisher_ms = (
        inputs["publisher_cpu_ms_per_record"] * stream_records
        + duration_ms(0.0, ["PutEvents"]) * status_events
        + duration_ms(0.0, ["UpdateItem"]) * (labels + receipts)
    )
    items["lambda_publisher"] = lambda_usd("publisher", publisher_ms, stream_records / STREAM_BATCH)
    items["dynamodb_publisher_reads"] = _ddb(0.0, inputs["publisher_rru_per_send"][channel] - dropped)
    items["dynamodb_publisher_labels"] = labels * _ddb(inputs.get("label_wru_p95", 0.0), 0.0)
    if receipts:
        items["dynamodb_publisher_sms_receipts"] = receipts * _ddb(inputs.get("sms_receipt_wru_p95", 0.0), 0.0)
    if callbacks:
        # EventBridge → SQS → the callbacks Lambda, one POST per status event.
        items["sqs_callbacks"] = status_events * (1 + 2 / SQS_BATCH) * PRICES["sqs_per_million_requests"]
        items["lambda_callbacks"] = lambda_usd("callbacks", CALLBACK_POST_MS * status_events, status_events / SQS_BATCH)
    log_bytes = deployment.log_bytes_per_send or (
        send["log_bytes"]
        + LAMBDA_LOG_LINES_BYTES
        + inputs["access_log_bytes"]
        + events * inputs["event_log_bytes"]
        + stream_records * inputs["publisher_log_bytes_per_record"]
        + (stream_records / STREAM_BATCH) * LAMBDA_LOG_LINES_BYTES
    )
    items["cloudwatch_logs"] = _logs(log_bytes)
    items["xray"] = XRAY_SAMPLED * PRICES["xray_traces_recorded_per_million"]  # one trace per api request
    total = sum(items.values())
    return {
        "total": round(total, 2),
        "overhead": round(total - items["provider"], 2),
        "items_usd": {name: round(value, 4) for name, value in items.items()},
        "front_door": front_door.value,
        "ses_route": deployment.ses_route.value,
        "ses_events": list(deployment.ses_events) if provider["fan_out"] == "sns_sqs" else None,
        "events_per_send": round(events, 3),
        "log_bytes_per_send": round(log_bytes),
    }


def levers(inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The email bill as deployed, then with each lever of LEVERS added: overhead and saving."""
    rows: list[dict[str, Any]] = []
    previous = bill("email", inputs)
    for name, deployment in LEVERS:
        found = bill("email", inputs, deployment)
        rows.append(
            {
                "lever": name,
                "overhead": found["overhead"],
                "saving": round(previous["overhead"] - found["overhead"], 2),
                "items_usd": found["items_usd"],
            }
        )
        previous = found
    return rows


def duration_ms(cpu_ms: float, calls: list[str]) -> float:
    return cpu_ms + sum(ASSUMED_LATENCY_MS.get(call, 10.0) for call in calls)
