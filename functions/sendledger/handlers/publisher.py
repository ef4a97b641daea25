"""The `publisher` Lambda: the ledger's DynamoDB Stream → status events on the EventBridge bus.

Records are published in order; a record that fails is reported as a partial batch failure,
so Lambda resumes the shard from it (bisecting and retrying within the event source's limits,
then the on-failure destination). Records after it are published again: same ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.usecases.publish import PublishReport, publish_record

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

logger = Logger()


@logger.inject_lambda_context
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.StatusOut | None = None
) -> dict[str, Any]:
    status = runtime or bootstrap.status_out()
    report = PublishReport()

    def handle(record: DynamoDBRecord) -> None:
        publish_record(record.raw_event, status.changes, status.bus, report, status.labels)

    response = process_partial_response(
        event=event,
        record_handler=handle,
        processor=BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False),
        context=context,
    )
    # Ids and types only: the details carry addresses.
    logger.info(
        "status events published",
        extra={
            "records": report.records,
            "labelled": report.labelled,
            "events": [(e.event_id, e.detail_type.value) for e in report.published],
            "failed": len(response.get("batchItemFailures", [])),
        },
    )
    return dict(response)
