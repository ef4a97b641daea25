"""README section for the bill: every line per million sends, and the API front door."""

from __future__ import annotations

from typing import Any

from benchmarks import cost
from benchmarks.markdown import fmt, table

LABELS = {
    "api_gateway": "API Gateway",
    "lambda_api": "Lambda: api",
    "dynamodb_send": "DynamoDB: the send (p95 units)",
    "provider": "provider (SES / SNS SMS)",
    "sns_publish": "SNS: SES event publishes",
    "sqs": "SQS: SES events (delivery, receive, delete)",
    "lambda_poller": "Lambda: poller, per event",
    "sms_status_logs": "CloudWatch Logs: SMS status records",
    "lambda_sms_delivery_logs": "Lambda: sms_delivery_logs",
    "dynamodb_events": "DynamoDB: its events (p95 units)",
    "eventbridge": "EventBridge: status events",
    "lambda_publisher": "Lambda: publisher",
    "dynamodb_publisher_reads": "DynamoDB: publisher reads",
    "dynamodb_publisher_labels": "DynamoDB: eligibility labels (publisher)",
    "sqs_callbacks": "SQS: callbacks",
    "lambda_callbacks": "Lambda: callbacks",
    "cloudwatch_logs": "CloudWatch Logs: ingestion",
    "xray": "X-Ray: traces recorded",
}
COLUMNS = (
    ("email", "email"),
    ("email_http_api", "email, HTTP API"),
    ("email_with_callbacks", "email, callbacks on"),
    ("sms", "SMS"),
)

FRONT_DOOR = """**The front door stays a REST API.** An HTTP API with IAM authorization would cost
{http} instead of {rest} per million requests ({saving} less per million email sends, the row above)
and still serve SigV4 callers, but it gives up what this stack uses or is about to use: resource
policies (issue #28 limits `/v1/admin/*` to admin principals with one; HTTP APIs have none, so the
limit would move into IAM policies every caller's role must get right), request validation at the
gateway (parameters are checked there today), AWS WAF (REST APIs only), usage plans and API keys
per caller, and per-method throttling of the webhook routes. The contract of SPEC sections 4
and 7 holds on REST as deployed; on an HTTP API the admin routes' extra grant would rest on
callers' IAM alone. `infra/api.py` keeps `apigw.RestApi`."""


def render(detail: dict[str, Any], prices: dict[str, Any]) -> list[str]:
    costs = detail.get("cost") or {}
    lines = ["## Cost per million sends (USD)", ""]
    if "email" not in costs:
        return [*lines, f"Not computed: {costs.get('reason', 'see run.errors')}", ""]
    names = [name for name in LABELS if any(name in (costs.get(key) or {}).get("items_usd", {}) for key, _ in COLUMNS)]
    rows = [
        [LABELS[name], *[(costs.get(key) or {}).get("items_usd", {}).get(name) for key, _ in COLUMNS]] for name in names
    ]
    rows.append(["**total**", *[(costs.get(key) or {}).get("total") for key, _ in COLUMNS]])
    rows.append(
        ["**overhead** (all but the provider)", *[(costs.get(key) or {}).get("overhead") for key, _ in COLUMNS]]
    )
    lines += table(["line", *[label for _, label in COLUMNS]], rows)
    inputs = costs.get("inputs") or {}
    send = inputs.get("send") or {}
    email, sms = send.get("email") or {}, send.get("sms") or {}
    saving = (costs["email"]["total"] or 0) - (costs["email_http_api"]["total"] or 0)
    lines += [
        "How each line is counted, per send: the api Lambda's duration is its median CPU per send over the "
        f"traffic mix plus the round trips it waits for ({fmt(email.get('duration_ms'))} ms for an email, "
        f"{fmt(sms.get('duration_ms'))} ms for an SMS; round trips assumed: "
        + ", ".join(f"{k} {fmt(v)} ms" for k, v in cost.ASSUMED_LATENCY_MS.items())
        + f"); DynamoDB at the traffic's p95 units (email {fmt(email.get('wru_p95'))} WRU, SMS "
        f"{fmt(sms.get('wru_p95'))} WRU); provider events per send as the simulator emitted them for the slice "
        f"({fmt((inputs.get('events_per_send') or {}).get('email'))} per email, "
        f"{fmt((inputs.get('events_per_send') or {}).get('sms'))} per SMS), each an SNS publish, one SQS "
        "delivery and a tenth of a receive and a delete, applied at the traffic's p95 event units, the poller's "
        f"duration per event the measured concurrent drain's wall time per event "
        f"({fmt((inputs.get('event') or {}).get('duration_ms'))} ms at a 10 ms round trip); status events on "
        f"EventBridge: the intent, the outcome and each event that moves the state "
        f"({fmt((inputs.get('status_events_per_send') or {}).get('email'))} per email); the publisher sees "
        f"{fmt((inputs.get('stream_records_per_send') or {}).get('email'))} stream records per email (the intent, "
        "the outcome, the recipient's marker, one receipt write per event) at its measured CPU per record "
        f"({fmt(inputs.get('publisher_cpu_ms_per_record'))} ms) plus one PutEvents round trip per status event, and "
        "reads the message item for each receipt change; CloudWatch Logs ingests the log bytes measured per send "
        f"({fmt(email.get('log_bytes'))} bytes from the api handler), per event "
        f"({fmt(inputs.get('event_log_bytes'))} bytes from the poller), per stream record "
        f"({fmt(inputs.get('publisher_log_bytes_per_record'))} bytes), Lambda's own START/END/REPORT lines "
        f"({cost.LAMBDA_LOG_LINES_BYTES} bytes per invocation) and API Gateway's access log line "
        f"({fmt(inputs.get('access_log_bytes'))} bytes); X-Ray records {100 * cost.XRAY_SAMPLED:g}% of requests "
        "(the default rule past its first request a second). With callbacks on, every status event also goes "
        "through SQS to the callbacks Lambda, which waits about "
        f"{fmt(cost.CALLBACK_POST_MS)} ms for the caller's endpoint. Not per send, so not in the table: the "
        "poller's scheduled invocations (one a minute), custom metrics and alarms (per month), storage.",
        "",
        f"Prices as of {prices['as_of']} ({prices['region']}): "
        + ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in prices.items() if isinstance(value, float))
        + ". DynamoDB units as billed (capacity section above).",
        "",
        FRONT_DOOR.format(
            http=f"${fmt(prices['api_gateway_http_per_million_requests'])}",
            rest=f"${fmt(prices['api_gateway_rest_per_million_requests'])}",
            saving=f"${fmt(round(saving, 2))}",
        ),
        "",
    ]
    return lines
