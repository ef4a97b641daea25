"""Composition root of the ingestion side (poller, sms_delivery_logs): built once per container."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from sendledger import wiring

if TYPE_CHECKING:
    from sendledger.usecases.context import Services
    from sendledger.usecases.ingest import Pipeline


def build_pipeline(services: Services) -> Pipeline:
    # Adapters (boto3, botocore, pynamodb) load on first use, not at handler import.
    from sendledger.adapters.cloudwatch_logs import CloudWatchLogReader
    from sendledger.adapters.dynamodb.events_store import DynamoEventStore
    from sendledger.adapters.dynamodb.ledger import DynamoLedger
    from sendledger.adapters.sqs import SqsEscalationQueue, SqsEventQueue
    from sendledger.usecases.ingest import Pipeline

    settings = services.settings
    if not isinstance(services.ledger, DynamoLedger):
        raise TypeError("the event store shares the DynamoDB ledger's client")
    logs = settings.sms_success_log_group or settings.sms_failure_log_group
    return Pipeline(
        services=services,
        store=DynamoEventStore(services.ledger),
        ses_queue=SqsEventQueue(settings.ses_events_queue_url) if settings.ses_events_queue_url else None,
        logs=CloudWatchLogReader() if logs else None,
        escalations=SqsEscalationQueue(settings.escalation_queue_url) if settings.escalation_queue_url else None,
    )


@cache
def pipeline() -> Pipeline:
    return build_pipeline(wiring.services())
