"""The `callbacks` Lambda: SQS (fed by an EventBridge rule on the bus) → signed POSTs, each to
the receiver of the caller that owns the event.

Each record is one status event. A delivered one, and one nobody receives (no owner, or an
owner without a callback URL), is deleted by the event source; any other is reported as a
partial batch failure after its visibility was set to the backoff delay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.usecases.callbacks import Delivery, deliver_callback

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

logger = Logger()
_ACKNOWLEDGED = (Delivery.DELIVERED, Delivery.NO_RECEIVER)


class CallbackNotDelivered(Exception):
    """The record stays queued (its next attempt is scheduled) or goes on to the DLQ."""


@logger.inject_lambda_context
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.StatusOut | None = None
) -> dict[str, Any]:
    status = runtime or bootstrap.status_out()
    policy = status.policy

    def handle(record: SQSRecord) -> None:
        # A record that could not finish before the function's timeout is not started: it
        # comes back when its visibility ends, instead of the whole invocation being killed.
        if context.get_remaining_time_in_millis() < (policy.timeout_seconds + status.retry_call_seconds) * 1000:
            logger.warning("callback not attempted: too little time left", extra={"message_id": record.message_id})
            raise CallbackNotDelivered("not attempted: the invocation's time is nearly up")
        attempt = deliver_callback(
            record.body,
            int(record.attributes.approximate_receive_count or 1),
            record.receipt_handle,
            policy=policy,
            receivers=status.receivers,
            retries=status.retries(record.event_source_arn),
            clock=status.clock,
        )
        # The event id, the outcome and the receiver's status only: never the body (it carries
        # addresses), the URL or a secret.
        logger.info(
            "callback attempt",
            extra={
                "event_id": attempt.event_id,
                "outcome": attempt.outcome.value,
                "status": attempt.status,
                "refused": attempt.refused,
            },
        )
        if attempt.outcome not in _ACKNOWLEDGED:
            raise CallbackNotDelivered(f"{attempt.outcome.value} (status {attempt.status}, {attempt.refused})")

    response = process_partial_response(
        event=event,
        record_handler=handle,
        processor=BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False),
        context=context,
    )
    return dict(response)
