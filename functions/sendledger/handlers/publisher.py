"""The `publisher` Lambda: the ledger's DynamoDB Stream → status events on the EventBridge bus.

Records are published in order; a record that fails is reported as a partial batch failure,
so Lambda resumes the shard from it (bisecting and retrying within the event source's limits,
then the on-failure destination). Records after it are published again: same ids.
The partial batch response is the event source's documented shape, written here rather than
through Powertools' batch utility: its import was about a tenth of this function's cold start.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.usecases.publish import PublishReport, publish_record

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
            publish_record(record, status.changes, status.bus, report, status.labels)
        except Exception:  # any fault of one record: reported, and the shard resumes from it
            sequence = record["dynamodb"]["SequenceNumber"]
            logger.exception("stream record not published", extra={"sequence_number": sequence})
            failures.append({"itemIdentifier": sequence})
    # Ids and types only: the details carry addresses.
    logger.info(
        "status events published",
        extra={
            "records": report.records,
            "labelled": report.labelled,
            "events": [(e.event_id, e.detail_type.value) for e in report.published],
            "failed": len(failures),
        },
    )
    return {"batchItemFailures": failures}
