"""Drain a queue of verified provider webhook events into the one ingestion routine.

The same pipelined drain as the SES queue (queue_drain.py): one recipient's events in order,
deleted only once applied; an unreadable one is left for the dead-letter queue and holds the
source's watermark, so absence is never proven past it.
"""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools import Logger

from sendledger.domain.events import DeliveryEvent, EventSource, MalformedEvent
from sendledger.ports.ingestion import EventQueue, QueueMessage
from sendledger.providers.sendgrid import events as sendgrid_events
from sendledger.usecases import queue_drain
from sendledger.usecases.ingest import IngestReport, Pipeline, ingest_event

logger = Logger(child=True)

SAFETY_SECONDS = 8.0

Parser = Callable[[str], DeliveryEvent | None]  # None: nothing to apply (delete it)
PARSERS: dict[str, Parser] = {EventSource.SENDGRID.value: sendgrid_events.parse_queued}


def drain_webhook_queue(
    pipeline: Pipeline, source: str, queue: EventQueue, seconds_left: Callable[[], float], report: IngestReport
) -> bool:
    """True when the queue was read to empty and every message received was applied and deleted."""
    parse, settings = PARSERS[source], pipeline.services.settings
    parts: list[IngestReport] = []  # one per apply, written on its thread, merged on this one

    def apply(message: QueueMessage) -> bool:
        part = IngestReport()
        parts.append(part)
        try:
            event = parse(message.body)
        except MalformedEvent as exc:
            part.poison += 1
            logger.error(
                "unreadable webhook event left for the DLQ",
                extra={"source": source, "sqs_message_id": message.message_id, "error": str(exc)},
            )
            return False
        if event is not None:
            ingest_event(pipeline.services, pipeline.events, event, part)
        return True

    def lane(message: QueueMessage) -> str | None:
        try:
            event = parse(message.body)
        except MalformedEvent:
            return None
        return event.recipient_key if event else None

    try:
        return queue_drain.drain(
            queue, apply, lane, settings.poll_apply_concurrency, lambda: seconds_left() < SAFETY_SECONDS
        )
    finally:
        for part in parts:
            report.absorb(part)
