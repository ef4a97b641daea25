"""The `publisher` Lambda: the ledger's DynamoDB Stream → status events on the EventBridge bus.

Records are published in order; a record that fails is reported as a partial batch failure,
so Lambda resumes the shard from it (bisecting and retrying within the event source's limits,
then the on-failure destination). Records after it are published again: same ids.
The partial batch response is the event source's documented shape, written here rather than
through Powertools' batch utility: its import was about a tenth of this function's cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap, names
from sendledger.usecases.publish import PublishReport, publish_record

if TYPE_CHECKING:
    from sendledger.domain.callers import CallerId

logger = Logger()


@logger.inject_lambda_context
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.StatusOut | None = None
) -> dict[str, Any]:
    status = runtime or bootstrap.status_out()
    report = PublishReport()
    failures: list[dict[str, str]] = []
    for record in event.get("Records", []):
        try:
            publish_record(record, status.changes, status.bus, report, status.labels, status.receipts)
        except Exception:  # any fault of one record: reported, and the shard resumes from it
            sequence = record["dynamodb"]["SequenceNumber"]
            logger.exception("stream record not published", extra={"sequence_number": sequence})
            failures.append({"itemIdentifier": sequence})
            report.counting = False  # this record and those after it come back with the retry
    if report.sms_segments:
        # One write per caller and day for the whole batch (never one per SMS), then the
        # dashboard's segments per caller; a fault here fails the batch: it comes back whole.
        status.sms_usage.add(report.sms_segments)
        _segments_by_caller(report.sms_segments)
    # Ids and types only: the details carry addresses.
    logger.info(
        "status events published",
        extra={
            "records": report.records,
            "labelled": report.labelled,
            "receipts": report.receipts,
            "events": [(e.event_id, e.detail_type.value) for e in report.published],
            "failed": len(failures),
        },
    )
    return {"batchItemFailures": failures}


def _segments_by_caller(counted: dict[tuple[CallerId, str], int]) -> None:
    """SmsSegments by caller: the dashboard's segments per caller per day (its sum over a day).
    One series per caller that texts: a deployment's callers are its teams, not its users.
    Powertools' metrics load here, with a batch's first SMS: not on every cold start."""
    from aws_lambda_powertools.metrics import MetricUnit, single_metric

    totals: dict[str, int] = {}
    for (owner, _day), billed in counted.items():
        totals[owner] = totals.get(owner, 0) + billed
    for caller, segments in totals.items():
        with single_metric(
            name=names.METRIC_SMS_SEGMENTS, unit=MetricUnit.Count, value=segments, namespace=names.METRICS_NAMESPACE
        ) as metric:
            metric.add_dimension(name="service", value=names.METRICS_SERVICE)
            metric.add_dimension(name="caller", value=caller)
