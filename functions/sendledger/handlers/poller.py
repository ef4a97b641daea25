"""The `poller` Lambda: EventBridge schedule → one poll cycle; SQS (push mode) → apply records.

In push mode the same function is an SQS event source of a provider's events queue (the lane that
says it is pushed): each record is applied on its own and failures are reported as partial batch
failures (only those return).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.handlers.metrics_out import emit
from sendledger.handlers.observability import traced
from sendledger.usecases.ingest import IngestReport, Pipeline
from sendledger.usecases.poll import CycleFailed, poll_cycle
from sendledger.usecases.queued_events import pushed_lane

logger = Logger()
metrics = Metrics()
if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def _record_handler(record: SQSRecord, pipeline: Pipeline) -> None:
    report = IngestReport()
    pushed_lane(pipeline).apply_body(pipeline, record.body, report)
    emit(metrics, report.metrics)


@logger.inject_lambda_context
@metrics.log_metrics
@traced(capture_response=True)  # counts and SQS message ids only
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.Runtime | None = None
) -> dict[str, Any]:
    runtime = runtime or bootstrap.runtime()
    pipeline = runtime.pipeline
    if "Records" in event:
        # Push mode only: the batch utility is not imported by scheduled cold starts.
        from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

        processor = BatchProcessor(event_type=EventType.SQS)
        response = process_partial_response(
            event=event,
            record_handler=lambda record: _record_handler(record, pipeline),
            processor=processor,
            context=context,
        )
        return dict(response)

    def seconds_left() -> float:
        return context.get_remaining_time_in_millis() / 1000

    try:
        report = poll_cycle(pipeline, seconds_left, runtime.templates)
    except CycleFailed as failed:
        emit(metrics, failed.report.metrics)
        raise
    emit(metrics, report.metrics)
    return report.summary()
