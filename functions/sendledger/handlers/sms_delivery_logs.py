"""The `sms_delivery_logs` Lambda: a CloudWatch Logs subscription (SMS delivery statuses) → apply.

A failed record makes the invocation fail so Lambda retries the (asynchronous) delivery;
records already applied come back as duplicates. Anything still missed is recovered by the
poller's FilterLogEvents reconciliation.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.domain.events import MalformedEvent
from sendledger.handlers import startup
from sendledger.handlers.metrics_out import emit
from sendledger.handlers.observability import lean_logger, traced
from sendledger.ports.reports import IngestReport

logger = lean_logger()
metrics = Metrics()


class RecordsFailed(Exception):
    """Some records were not applied; the asynchronous invocation is retried."""


@startup.ends_startup  # outermost: the first invocation's return ends the start
@logger.inject_lambda_context
@metrics.log_metrics
@traced(capture_response=True)  # counts only
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.Runtime | None = None
) -> dict[str, Any]:
    subscription = (runtime or bootstrap.runtime()).log_subscription
    try:
        batch = subscription.decode(event)
    except MalformedEvent as exc:
        logger.error("unreadable CloudWatch Logs subscription event", extra={"error": str(exc)})
        return {"applied": 0, "malformed": True}
    if batch.control:
        return {"applied": 0, "control": True}
    report = IngestReport()
    failed = 0
    for record in batch.records:
        try:
            subscription.ingest(record, report)
        except Exception:
            failed += 1
            logger.exception("SMS status record not applied", extra={"log_event_id": record.log_event_id})
    emit(metrics, report.metrics)
    if failed:
        raise RecordsFailed(f"{failed} of {len(batch.records)} records not applied")
    return {"applied": report.applied, "duplicates": report.duplicates, "suppressed": report.suppressed}
