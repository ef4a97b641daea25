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
    "eventbridge_ses_events": "EventBridge: SES events on the default bus",
    "sqs": "SQS: SES events (delivery, receive, delete)",
    "lambda_poller": "Lambda: poller, per event",
    "sms_status_logs": "CloudWatch Logs: SMS status records",
    "lambda_sms_delivery_logs": "Lambda: sms_delivery_logs",
    "dynamodb_events": "DynamoDB: its events (p95 units)",
    "eventbridge": "EventBridge: status events",
    "lambda_publisher": "Lambda: publisher",
    "dynamodb_publisher_reads": "DynamoDB: publisher reads",
    "dynamodb_publisher_labels": "DynamoDB: eligibility labels (publisher)",
    "dynamodb_publisher_sms_receipts": "DynamoDB: SMS receipts (publisher)",
    "sqs_callbacks": "SQS: callbacks",
    "lambda_callbacks": "Lambda: callbacks",
    "cloudwatch_logs": "CloudWatch Logs: ingestion",
    "xray": "X-Ray: traces recorded",
}
COLUMNS = (
    ("email", "email, as deployed"),
    ("email_all_levers", "email, every lever below"),
    ("email_with_callbacks", "email, callbacks on"),
    ("sms", "SMS"),
)

# What each lever of cost.LEVERS gives up, by its name there.
GIVES_UP = {
    cost.LEVERS[0][0]: (
        "The REST API's resource policy, which refuses `/v1/admin/*` to every principal but the admin ones "
        "(HTTP APIs have none): the admin routes would keep two independent checks, the route-level IAM grant "
        "(the stack's separate admin invoke policy, on `execute-api` ARNs per route) and the in-app list "
        "(`ADMIN_PRINCIPALS`, checked by the api Lambda on every admin request). Also private endpoints (an "
        "HTTP API is public: a VPC-only deployment needs REST), gateway request validation (parameters would be "
        "checked by the Lambda alone), AWS WAF and usage plans (REST only), and the gateway's own problem+json "
        "error bodies (an HTTP API's 403 has a fixed JSON body)."
    ),
    cost.LEVERS[1][0]: (
        "The SNS topic and its envelope check (a body naming another topic is refused): the rule's event "
        "pattern (source `aws.ses`, this account, this configuration set) takes its place, and the poller "
        "parses EventBridge's envelope instead of SNS's. SPEC section 6 names the SNS path."
    ),
    cost.LEVERS[2][0]: (
        "**The proof an unknown SES send rests on.** A send whose SendEmail call timed out is resolved by an "
        "event tagged with its message id; absence proves non-acceptance only once the watermark has passed "
        "the send time plus UNKNOWN_GRACE_SECONDS (usecases/resolve_unknown.py), and then the message is sent "
        "again. SES publishes a Send event within seconds of acceptance; without it the first tagged event is "
        "the Delivery, which a receiving server's deferral (greylisting) can hold back past the grace: an "
        "accepted message would then be sent twice, the duplicate this project exists to prevent. Also the "
        "Reject (virus) and DeliveryDelay events. Not adopted without a grace as long as SES's retry horizon "
        "or another acceptance proof."
    ),
    cost.LEVERS[3][0]: (
        "Detail in the logs: the api's log line would name the message, the caller and the outcome only, "
        "the poller's one line per event shrinks to ids and the state change; the access log keeps request "
        "id, status, caller and latency. Histories in the ledger are unchanged (they are the evidence)."
    ),
}

LEVERS_NOTE = """The bar (`cost_per_million.email.overhead`) is the bill as deployed: a lever counts once
infra/ builds it. Decision 1's item model lowers the bill through the traffic's p95 write units
(the DynamoDB line above), not through a lever of its own."""


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
    ]
    return [*lines, *_levers(costs.get("levers") or [], costs["email"])]


def _levers(levers: list[dict[str, Any]], deployed: dict[str, Any]) -> list[str]:
    """Each lever of the email bill: its saving over the row above, and what it gives up."""
    lines = ["### The bill's levers (issue 36), one after the other", ""]
    rows: list[list[Any]] = [["as deployed", deployed.get("overhead"), "—", "—"]]
    rows += [[lever["lever"], lever["overhead"], lever["saving"], GIVES_UP.get(lever["lever"], "")] for lever in levers]
    lines += table(["lever", "email overhead after it", "saving", "what it gives up"], rows)
    return [*lines, LEVERS_NOTE, ""]
