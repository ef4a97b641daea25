"""A queue of one provider's events drained into the one ingestion routine (a poll lane).

Every provider whose events arrive on a queue is drained the same way: event publishing through
a topic, or signed webhooks the api verified and queued. Pipelined (queue_drain.py): one recipient's
events in order, each message deleted only once everything it carries is applied; an unreadable
one is left for the dead-letter queue and holds the source's watermark, so absence is never
proven past it. Read to empty with nothing left behind, the source's watermark is the cycle's start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.events import DeliveryEvent, MalformedEvent
from sendledger.ports.ingestion import EventQueue, QueueMessage
from sendledger.ports.providers import EventLane, EventSink
from sendledger.ports.reports import CycleReport, IngestReport
from sendledger.settings import IngestionMode
from sendledger.usecases import queue_drain

if TYPE_CHECKING:
    from sendledger.settings import Settings

logger = Logger(child=True)

SAFETY_SECONDS = 8.0

Parser = Callable[[str], list[DeliveryEvent]]  # a body's events ([]: nothing to apply, delete it)


@dataclass
class QueueLane:
    name: str
    source: str
    queue: EventQueue
    parse: Parser  # raises MalformedEvent for a body that is not one of the provider's events
    # INGESTION_MODE=push attaches an SQS event source to this queue: what it holds in flight
    # holds the watermark too.
    pushable: bool = False
    # False: the queue is a faster path beside the provider's complete one (that lane alone
    # moves the watermark).
    completes_source: bool = True
    concurrency: int = 1  # applies at once (settings.poll_apply_concurrency)
    push_mode: bool = False  # ingestion_mode is push: an SQS event source may hold messages

    def run(
        self, sink: EventSink, started: datetime, seconds_left: Callable[[], float], report: CycleReport
    ) -> datetime | None:
        drained = drain(sink, self, seconds_left, report)
        pushed = self.pushable and self.push_mode
        if drained and self.completes_source and (not pushed or self.queue.in_flight() == 0):
            return started
        return None

    def apply_body(self, sink: EventSink, body: str, report: IngestReport) -> None:
        """One body pushed by an SQS event source. MalformedEvent propagates: the batch reports it failed."""
        for event in self.parse(body):
            sink.apply(event, report)


def queue_lane(
    settings: Settings,
    name: str,
    source: str,
    queue: EventQueue,
    parse: Parser,
    *,
    pushable: bool = False,
    completes_source: bool = True,
) -> QueueLane:
    """A provider's queue lane under this deployment's apply concurrency and ingestion mode."""
    return QueueLane(
        name,
        source,
        queue,
        parse,
        pushable=pushable,
        completes_source=completes_source,
        concurrency=settings.poll_apply_concurrency,
        push_mode=settings.ingestion_mode is IngestionMode.PUSH,
    )


def drain(sink: EventSink, lane: QueueLane, seconds_left: Callable[[], float], report: IngestReport) -> bool:
    """True when the queue was read to empty and every message received was applied and deleted."""
    parts: list[IngestReport] = []  # one per apply, written on its thread, merged on this one
    # Each body is parsed once, when its lane is chosen; its apply takes the same events.
    parsed: dict[str, list[DeliveryEvent] | str] = {}  # by SQS message id: its events, or why unreadable

    def read(message: QueueMessage) -> list[DeliveryEvent] | str:
        if message.message_id not in parsed:
            try:
                parsed[message.message_id] = lane.parse(message.body)
            except MalformedEvent as exc:
                parsed[message.message_id] = str(exc)
        return parsed[message.message_id]

    def recipient_of(message: QueueMessage) -> str | None:
        """Who the message's event is about (an unreadable one is independent of everything)."""
        events = read(message)
        return events[0].recipient_key if isinstance(events, list) and events else None

    def apply(message: QueueMessage) -> bool:
        part = IngestReport()
        parts.append(part)
        events = read(message)
        parsed.pop(message.message_id, None)  # applied once per receipt: no need to keep it
        if isinstance(events, str):
            part.poison += 1
            # Not deleted: after maxReceiveCount the redrive policy moves it to the DLQ.
            logger.error(
                "unreadable event message left for the DLQ",
                extra={
                    "source": lane.source,
                    "sqs_message_id": message.message_id,
                    "receive_count": message.receive_count,
                    "error": events,
                },
            )
            return False
        for event in events:
            sink.apply(event, part)
        return True

    try:
        return queue_drain.drain(
            lane.queue,
            apply,
            recipient_of,
            lane.concurrency,
            lambda: seconds_left() < SAFETY_SECONDS,
        )
    finally:
        for part in parts:
            report.absorb(part)


def pushed_lane(lanes: Sequence[EventLane]) -> QueueLane:
    """The lane whose queue an SQS event source pushes (push mode attaches one queue)."""
    for lane in lanes:
        if isinstance(lane, QueueLane) and lane.pushable:
            return lane
    raise LookupError("no lane takes pushed events (INGESTION_MODE=push needs a provider queue)")
