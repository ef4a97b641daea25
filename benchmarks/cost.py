"""Cost per million operations from the counted requests and published AWS list prices."""

from __future__ import annotations

import math
from typing import Any

PRICES: dict[str, Any] = {
    "as_of": "2026-11-29",
    "region": "us-east-1 on-demand list prices, AWS pricing pages as quoted in issue #6",
    "dynamodb_write_request_unit_per_million": 0.625,
    "dynamodb_read_request_unit_per_million": 0.125,
    "dynamodb_note": (
        "transactional writes consume 2 write request units per item (per started KB); "
        "ConditionCheck items are billed as transactional writes here (conservative) and cancelled "
        "transactions for their prepare writes (1 per item per started KB); index writes included"
    ),
    "lambda_arm64_per_gb_second": 0.0000133334,
    "lambda_per_million_requests": 0.20,
    "ses_per_thousand_emails": 0.10,
    "sns_sms_us_per_message": 0.00581,
    "sns_sms_note": "plus US carrier fees, not included",
    "sqs_per_million_requests": 0.40,
    # Not in the list, added because every send / SES event pays them (itemised):
    "api_gateway_rest_per_million_requests": 3.50,
    "sns_publish_per_million": 0.50,
}

# Deployed latency of each AWS call (assumed, in-region; the benchmark cannot measure AWS):
# Lambda bills wall time, so duration = measured CPU time + these.
ASSUMED_LATENCY_MS = {
    "TransactWriteItems": 15.0,
    "BatchGetItem": 6.0,
    "GetItem": 5.0,
    "PutItem": 6.0,
    "UpdateItem": 6.0,
    "Query": 6.0,
    "SendEmail": 40.0,
    "Publish": 40.0,
}
MEMORY_GB = {"api": 0.5, "poller": 0.5, "sms_delivery_logs": 0.25}
SQS_BATCH = 10  # the poller receives and deletes in batches of 10


def _ddb(figure: dict[str, Any]) -> float:
    return float(
        figure["write_request_units"] * PRICES["dynamodb_write_request_unit_per_million"]
        + figure["read_request_units"] * PRICES["dynamodb_read_request_unit_per_million"]
    )


def _operations(figure: dict[str, Any]) -> list[str]:
    return [entry.split("(", 1)[0] for entry in figure.get("operations", [])]


def lambda_compute_usd_per_million(function: str, duration_ms: float) -> float:
    """What a million invocations' `duration_ms` each cost at the function's memory size."""
    return MEMORY_GB[function] * duration_ms / 1000 * PRICES["lambda_arm64_per_gb_second"] * 1_000_000


def _lambda(function: str, cpu_ms: float, calls: list[str], invocations: float = 1.0) -> tuple[float, float]:
    duration = math.ceil(cpu_ms + sum(ASSUMED_LATENCY_MS.get(call, 10.0) for call in calls))
    compute = lambda_compute_usd_per_million(function, duration)
    return compute + invocations * PRICES["lambda_per_million_requests"], duration


def send_cost(figure: dict[str, Any], channel: str, cpu_ms: float) -> dict[str, Any]:
    provider_call = "SendEmail" if channel == "email" else "Publish"
    lam, duration = _lambda("api", cpu_ms, [*_operations(figure), provider_call])
    items = {
        "dynamodb": _ddb(figure),
        "lambda": lam,
        "api_gateway": PRICES["api_gateway_rest_per_million_requests"],
        "provider": PRICES["ses_per_thousand_emails"] * 1000
        if channel == "email"
        else PRICES["sns_sms_us_per_message"] * 1_000_000,
    }
    return _total(items, {"lambda_billed_ms_assumed": duration, "lambda_cpu_ms_measured": round(cpu_ms, 3)})


def ses_event_cost(figure: dict[str, Any], cpu_ms: float) -> dict[str, Any]:
    lam, duration = _lambda("poller", cpu_ms, _operations(figure), invocations=0.0)
    sqs_requests = 1 + 2 / SQS_BATCH  # SNS delivers (SendMessage), the poller receives and deletes in batches
    items = {
        "dynamodb": _ddb(figure),
        "lambda": lam,
        "sns_publish": PRICES["sns_publish_per_million"],
        "sqs": sqs_requests * PRICES["sqs_per_million_requests"],
    }
    return _total(
        items, {"lambda_billed_ms_assumed": duration, "note": "poller invocations are per schedule, not per event"}
    )


def sms_event_cost(figure: dict[str, Any], cpu_ms: float) -> dict[str, Any]:
    lam, duration = _lambda("sms_delivery_logs", cpu_ms, _operations(figure), invocations=1.0)
    items = {"dynamodb": _ddb(figure), "lambda": lam}
    return _total(
        items, {"lambda_billed_ms_assumed": duration, "note": "one subscription invocation per record (worst case)"}
    )


def _total(items: dict[str, float], extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "usd": round(sum(items.values()), 2),
        "items_usd": {k: round(v, 4) for k, v in items.items()},
        **extra,
    }
