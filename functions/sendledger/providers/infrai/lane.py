"""Infrai pushes nothing: each poll cycle asks for the status of every Infrai message still in
flight (its STATUS marker is due), oldest first, at most INFRAI_STATUSES_PER_CYCLE of them.

A status seen for the first time is one event through the one apply routine (a status that
proves nothing the message does not show already is not written again). Each cycle also looks up
the timed-out Infrai sends (by the Idempotency-Key they were sent with): one found is accepted
at once and asked for its status from then on; absence still waits for the grace (resolve_unknown). A final
status drops the marker; otherwise it is due again INFRAI_STATUS_INTERVAL_SECONDS later, until
INFRAI_STATUS_MAX_AGE_SECONDS. `delivered` is final but for a complaint: the marker becomes a
COMPLAINT one, and the message is read again on the complaint schedule (complaints.py) until a
complaint, or the horizon; these reads take what the cycle's bound leaves after the messages in
flight (a bounce or a delivery not yet seen comes first). A test caller's message
(domain/test_mode.py) is never asked of Infrai: the simulated rules answer for it
(simulation.py). When every
due message was asked, every status reached before the cycle's start minus the interval is
applied: that is the `infrai` watermark (absence of a timed-out send is proven by the lookup,
not by it; a complaint after the delivery is bounded by the complaint schedule, not by it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger
from urllib3.exceptions import HTTPError as Urllib3Error

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import EventKind, MalformedEvent
from sendledger.domain.messages import TERMINAL, DueKind, Message, MessageState
from sendledger.domain.outcomes import target_state
from sendledger.domain.recipients import fingerprint_of
from sendledger.ports.providers import Finding, LookupResult
from sendledger.providers.infrai import NAME, SOURCE
from sendledger.providers.infrai.assumptions import ASSUMED
from sendledger.providers.infrai.client import InfraiClient
from sendledger.providers.infrai.events import Record, read_record, status_event
from sendledger.providers.infrai.settings import InfraiSettings
from sendledger.providers.infrai.simulation import infrai_timeline, status_at
from sendledger.usecases.ingest import IngestReport, Pipeline, ingest_event
from sendledger.usecases.resolve_unknown import accept_found

if TYPE_CHECKING:
    from sendledger.usecases.poll import CycleReport

logger = Logger(child=True)

SAFETY_SECONDS = 8.0


@dataclass
class StatusLane:
    client: InfraiClient
    name: str = NAME
    source: str = SOURCE
    completes_source: bool = True  # the source's complete lane: it moves the watermark

    def run(
        self, pipeline: Pipeline, started: datetime, seconds_left: Callable[[], float], report: CycleReport
    ) -> datetime | None:
        fragment = pipeline.services.settings.provider(InfraiSettings)
        due = pipeline.due_work.items(DueKind.STATUS, started, fragment.statuses_per_cycle)
        caught_up = len(due) < fragment.statuses_per_cycle
        self._find_timed_out_sends(pipeline, fragment, seconds_left, report)
        for item in due:
            if seconds_left() < SAFETY_SECONDS:
                return None
            message = self._message(pipeline, item.message_id, DueKind.STATUS)
            if message is not None:
                caught_up = self._ask(pipeline, message, fragment, report) and caught_up
        self._read_for_complaints(
            pipeline, fragment, started, fragment.statuses_per_cycle - len(due), seconds_left, report
        )
        # Caught up: every message was asked within its interval, the longest of them (an SMS's
        # is its country's) is how far behind the cycle's start the source is proven read.
        longest = pipeline.services.settings.longest_status_interval(self.name) or fragment.status_interval_seconds
        return started - timedelta(seconds=longest) if caught_up else None

    def _message(self, pipeline: Pipeline, message_id: str, kind: DueKind) -> Message | None:
        """The message to ask about; None when it is not ours to ask (another provider that polls
        its statuses) or gone (its marker is dropped)."""
        message = pipeline.services.messages.get(message_id)
        if message is None:
            pipeline.due_work.clear(message_id, kind)
        return message if message is not None and message.provider == NAME else None

    def _read_for_complaints(
        self,
        pipeline: Pipeline,
        fragment: InfraiSettings,
        started: datetime,
        budget: int,
        seconds_left: Callable[[], float],
        report: CycleReport,
    ) -> None:
        if budget <= 0:
            return
        for item in pipeline.due_work.items(DueKind.COMPLAINT, started, budget):
            if seconds_left() < SAFETY_SECONDS:
                return
            message = self._message(pipeline, item.message_id, DueKind.COMPLAINT)
            if message is not None:
                self._read_again(pipeline, message, fragment, report)

    def _read_again(self, pipeline: Pipeline, message: Message, fragment: InfraiSettings, report: CycleReport) -> None:
        """A delivered message read again: a complaint is applied (it suppresses); otherwise it is
        due at the schedule's next read, or no longer once the horizon is reached."""
        now = pipeline.services.clock.now()
        if message.state is not MessageState.DELIVERED:  # complained since, or escalated: nothing to learn
            pipeline.due_work.clear(message.message_id, DueKind.COMPLAINT)
            return
        answered, record = self._read(pipeline, message, now, report)
        if not answered:
            return  # still due: asked again next cycle
        if record is not None:
            self._apply(pipeline, message, record, report)
            if record.meaning is not None and record.meaning.final and record.meaning.kind is not EventKind.DELIVERY:
                pipeline.due_work.clear(message.message_id, DueKind.COMPLAINT)
                report.bump("complaint_read_final")
                return
        self._watch(pipeline, message, fragment, now, DueKind.COMPLAINT, report)

    def _watch(
        self, pipeline: Pipeline, message: Message, fragment: InfraiSettings, now: datetime, was: DueKind,
        report: CycleReport,
    ) -> None:  # fmt: skip
        """The delivered message's next complaint read (its marker of `was` becomes a COMPLAINT one)."""
        delivered_at = message.updated_at if message.state is MessageState.DELIVERED else now
        next_read = fragment.complaint_schedule().next_read(min(delivered_at, now), now)
        if next_read is None:
            pipeline.due_work.clear(message.message_id, was)
            report.bump("complaint_horizon_reached")
            return
        pipeline.due_work.reschedule(message.message_id, DueKind.COMPLAINT, next_read, was=was)
        report.bump("complaint_read_due")

    def _find_timed_out_sends(
        self, pipeline: Pipeline, fragment: InfraiSettings, seconds_left: Callable[[], float], report: CycleReport
    ) -> None:
        for item in pipeline.due_work.items(DueKind.UNKNOWN, None, fragment.statuses_per_cycle):
            if seconds_left() < SAFETY_SECONDS:
                return
            message = pipeline.services.messages.get(item.message_id)
            if message is None or message.provider != NAME or message.state is not MessageState.UNKNOWN:
                continue
            if message.test:
                continue  # a simulated send: never asked of Infrai (absence is proven at the grace)
            try:
                answer = self.client.get(message.channel, message.message_id)
                record = read_record(json.loads(answer.body)) if answer.status == 200 else None
            except (Urllib3Error, DependencyUnavailable, ValueError, MalformedEvent):
                continue  # proves nothing: the lookup at the grace asks again
            if record is None:
                continue  # not found yet: absence is proven only after the grace
            found = LookupResult(Finding.FOUND, provider_message_id=record.provider_message_id, status=record.status)
            accept_found(pipeline, message, found, {"lookup": "found", "source": SOURCE}, report)
            message.provider_message_id = record.provider_message_id
            message.state = MessageState.ACCEPTED
            self._apply(pipeline, message, record, report)

    def _apply(self, pipeline: Pipeline, message: Message, record: Record, report: IngestReport | None = None) -> None:
        event = status_event(
            record,
            message_id=message.message_id,
            recipient_key=message.recipient_key,
            channel=message.channel,
            seen_at=pipeline.services.clock.now(),
        )
        if event is not None and target_state(event) is not message.state:
            ingest_event(pipeline.services, pipeline.events, event, report or IngestReport())  # news only

    def _ask(self, pipeline: Pipeline, message: Message, fragment: InfraiSettings, report: CycleReport) -> bool:
        """True when Infrai answered (the message is settled or due again)."""
        now = pipeline.services.clock.now()
        if message.state is MessageState.DELIVERED:  # delivered since (a lookup's record): watch it
            self._watch(pipeline, message, fragment, now, DueKind.STATUS, report)
            return True
        if message.state in TERMINAL:  # settled since (an earlier status, an escalation)
            pipeline.due_work.clear(message.message_id, DueKind.STATUS)
            return True
        answered, record = self._read(pipeline, message, now, report)
        if not answered:
            return False
        if record is not None:
            self._apply(pipeline, message, record, report)
            if record.meaning is None:
                logger.warning("unknown infrai status, treated as in flight", extra={"status": record.status})
            if record.meaning is not None and record.meaning.final:
                report.bump("status_final")
                if record.meaning.kind is EventKind.DELIVERY:  # final but for a complaint
                    self._watch(pipeline, message, fragment, now, DueKind.STATUS, report)
                else:
                    pipeline.due_work.clear(message.message_id, DueKind.STATUS)
                return True
        if now - message.created_at > timedelta(seconds=fragment.status_max_age_seconds):
            pipeline.due_work.clear(message.message_id, DueKind.STATUS)
            logger.warning(
                "infrai message never final: no longer asked",
                extra={"message_id": message.message_id, "recipient": fingerprint_of(message.recipient_key)},
            )
            report.bump("status_given_up")
            return True
        settings = pipeline.services.settings
        interval = settings.status_interval_for(message.provider, message.channel, message.to)
        due_at = now + timedelta(seconds=interval or fragment.status_interval_seconds)
        pipeline.due_work.reschedule(message.message_id, DueKind.STATUS, due_at)
        report.bump("status_in_flight" if record is not None else "status_not_found")
        return True

    def _read(
        self, pipeline: Pipeline, message: Message, now: datetime, report: CycleReport
    ) -> tuple[bool, Record | None]:
        """(answered, the record: None when Infrai has none)."""
        key = message.provider_message_id or message.message_id
        try:
            if message.test:  # a simulated send: Infrai has no record of it; the rules answer
                return True, simulated_record(message, key, now)
            answer = self.client.get(message.channel, key)
            return True, read_record(json.loads(answer.body)) if answer.status == 200 else None
        except (Urllib3Error, DependencyUnavailable, ValueError, MalformedEvent) as exc:
            logger.warning(
                "infrai status not read", extra={"message_id": message.message_id, "error": type(exc).__name__}
            )
            report.bump("status_unread")
            return False, None


def simulated_record(message: Message, provider_id: str, now: datetime) -> Record:
    """What simulated Infrai's record of a test caller's message says at `now` (the rules' course
    from the message's creation), under the simulated provider id (domain/test_mode.py)."""
    status, at = status_at(infrai_timeline(message.channel.value, message.to, message.created_at), now)
    return Record(provider_id, status, ASSUMED.statuses.get(status), at)
