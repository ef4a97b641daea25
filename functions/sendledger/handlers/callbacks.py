"""The `callbacks` Lambda: SQS (fed by an EventBridge rule on the bus) → signed POSTs, each to
the receiver of the caller that owns the event.

Each record is one status event, with its own attempt count (usecases/callback_batch.py runs
one lane per caller). Every record the batch settled is deleted by the event source: it was
delivered, needs no POST, was queued again for its next attempt, or moved to the DLQ. A record
the batch could not settle (SQS itself failing) is reported as a partial batch failure and
comes back when its visibility ends.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sendledger import bootstrap
from sendledger.domain.callback_schedule import ATTEMPTS_ATTRIBUTE, DUE_ATTRIBUTE, Queued
from sendledger.handlers import startup
from sendledger.handlers.observability import lean_logger
from sendledger.usecases.callback_batch import deliver_batch
from sendledger.usecases.callbacks import Delivery

logger = lean_logger()
metrics = Metrics()


def queued_of(record: dict[str, Any]) -> Queued:
    """The record's body and the schedule its message attributes carry (none: fresh from the bus)."""
    attributes = record.get("messageAttributes") or {}

    def number(name: str) -> int | None:
        text = (attributes.get(name) or {}).get("stringValue")
        return int(text) if isinstance(text, str) and text.isdigit() else None

    due = number(DUE_ATTRIBUTE)
    return Queued(
        str(record.get("body") or ""),
        number(ATTEMPTS_ATTRIBUTE) or 0,
        datetime.fromtimestamp(due, UTC) if due is not None else None,
    )


@startup.ends_startup  # outermost: the first invocation's return ends the start
@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, runtime: bootstrap.StatusOut | None = None
) -> dict[str, Any]:
    status = runtime or bootstrap.status_out()
    records: list[dict[str, Any]] = event.get("Records") or []
    if not records:
        return {"batchItemFailures": []}
    queue_arn = str(records[0]["eventSourceARN"])
    outcomes = deliver_batch(
        [queued_of(record) for record in records],
        account_id=queue_arn.split(":")[4],  # the queue's account is the bus's
        policy=status.policy,
        receivers=status.receivers,
        queue=status.queues(queue_arn),
        clock=status.clock,
        seconds_left=lambda: context.get_remaining_time_in_millis() / 1000,
    )
    failures = []
    for record, outcome in zip(records, outcomes, strict=True):
        if isinstance(outcome, Exception):
            logger.warning("callback record not settled", extra={"message_id": record["messageId"]}, exc_info=outcome)
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        # The event id, the owner's opaque id, the outcome and the receiver's status only:
        # never the body (it carries addresses), the URL or a secret.
        extra = {
            "event_id": outcome.event_id,
            "caller_id": outcome.owner,
            "outcome": outcome.outcome.value,
            "status": outcome.status,
            "refused": outcome.refused,
        }
        if outcome.outcome is Delivery.FOREIGN:
            # Not our publisher's event reached the callback queue: someone put it there.
            logger.error("callback refused: not a sendledger event of this account", extra=extra)
            metrics.add_metric(name="CallbacksForeignRefused", unit=MetricUnit.Count, value=1)
        else:
            logger.info("callback attempt", extra=extra)
    return {"batchItemFailures": failures}
