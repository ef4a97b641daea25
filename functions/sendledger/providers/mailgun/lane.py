"""Mailgun's Events API, polled from a cursor in DynamoDB (one step of the poll cycle).

Mailgun's results for the recent past are not final: events become visible out of order, so
a range read now can gain events later. Its rule: a page whose events are older than a
threshold (`MAILGUN_EVENTS_FINAL_AFTER_SECONDS`) is final. Two passes per cycle, one cursor:

1. **finality**, from `final` (epoch seconds, inclusive), ascending, following `paging.next`.
   Items older than the bound (cycle start minus the threshold) are applied; the cursor moves over
   a page only once the page is applied. Reaching an item at or past the bound, or the end,
   means every event before the bound is applied: the cursor and the watermark move to the
   bound, never past it.
2. **live**, from where the last live page ended (its `next` URL returns what arrived since):
   everything is applied at once, final or not, so a complaint suppresses within a poll
   interval. What arrives late behind it is caught by pass 1; an event applied by both costs
   its duplicate's one request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from sendledger.ports.reports import CycleReport, IngestReport
from sendledger.providers.mailgun import SOURCE
from sendledger.providers.mailgun.events import EventsApi, EventsPage, PageItem
from sendledger.providers.mailgun.search import UnknownSearch
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.usecases import fan_out

if TYPE_CHECKING:
    from sendledger.domain.clock import Clock
    from sendledger.ports.poller_state import PollerStateStore
    from sendledger.ports.providers import EventSink, LaneStores
    from sendledger.settings import Settings

logger = Logger(child=True)

FIRST_LOOKBACK = timedelta(minutes=30)  # where a fresh cursor starts, before the bound (Mailgun's example)
MAX_PAGES = 50  # per pass and cycle; the rest waits for the next cycle
SAFETY_SECONDS = 8.0


@dataclass
class EventsLane:
    """The poll step: both passes over the Events API, then the search for unknown sends."""

    api: EventsApi
    cursors: PollerStateStore  # the passes' cursor, one item
    search: UnknownSearch
    clock: Clock
    final_after_seconds: int  # MAILGUN_EVENTS_FINAL_AFTER_SECONDS
    concurrency: int = 1  # applies at once (settings.poll_apply_concurrency)
    name: str = SOURCE
    source: str = SOURCE
    completes_source: bool = True  # the source's complete lane: it moves the watermark

    def run(
        self, sink: EventSink, started: datetime, seconds_left: Callable[[], float], report: CycleReport
    ) -> datetime | None:
        watermark = poll_mailgun(sink, self, started, seconds_left, report)
        for message_id in self.search.run(sink, self.api, seconds_left, report):
            report.bump("unknown_found_by_search", message_id)
        return watermark


def events_lane(settings: Settings, stores: LaneStores, api: EventsApi) -> EventsLane:
    final_after = settings.provider(MailgunSettings).events_final_after_seconds
    search = UnknownSearch(stores.due_work, stores.messages, stores.clock)
    return EventsLane(api, stores.cursors, search, stores.clock, final_after, settings.poll_apply_concurrency)


def poll_mailgun(
    sink: EventSink, lane: EventsLane, started: datetime, seconds_left: Callable[[], float], report: IngestReport
) -> datetime | None:
    """Both passes; returns the new watermark when the finality pass reached its bound."""
    store, api = lane.cursors, lane.api
    bound = (started - timedelta(seconds=lane.final_after_seconds)).timestamp()
    raw = store.cursor(SOURCE)
    cursor: dict[str, Any] = json.loads(raw) if raw else {"final": bound - FIRST_LOOKBACK.total_seconds()}

    def commit(**changes: Any) -> None:
        nonlocal raw, cursor
        updated = json.dumps({**cursor, **changes}, sort_keys=True, separators=(",", ":"))
        if updated != raw:
            store.put_cursor(SOURCE, raw, updated, lane.clock.now())
            raw, cursor = updated, json.loads(updated)

    apply = Applier(sink, lane.concurrency)
    reached = _finality_pass(apply, api, cursor, bound, seconds_left, report, commit)
    _live_pass(apply, api, cursor, bound, seconds_left, report, commit)
    return datetime.fromtimestamp(bound, UTC) if reached else None


def _finality_pass(
    apply: Applier,
    api: EventsApi,
    cursor: dict[str, Any],
    bound: float,
    seconds_left: Callable[[], float],
    report: IngestReport,
    commit: Callable[..., None],
) -> bool:
    begin = float(cursor["final"])
    if begin >= bound:
        return True  # nothing has become final since the last cycle
    page: EventsPage = api.query({"begin": _epoch(begin), "ascending": "yes"})
    for _ in range(MAX_PAGES):
        final = [item for item in page.items if item.timestamp < bound]
        apply.items(final, report)
        if len(final) < len(page.items) or not page.items or page.next_url is None:
            commit(final=max(begin, bound))  # every event before the bound is applied
            return True
        begin = page.items[-1].timestamp  # inclusive: the next query repeats only this second
        commit(final=begin)
        if seconds_left() < SAFETY_SECONDS:
            return False
        page = api.follow(page.next_url)
    return False


def _live_pass(
    apply: Applier,
    api: EventsApi,
    cursor: dict[str, Any],
    bound: float,
    seconds_left: Callable[[], float],
    report: IngestReport,
    commit: Callable[..., None],
) -> None:
    url, position = cursor.get("live"), cursor.get("live_ts")
    if not url or position is None or float(position) < bound:
        # No live position, or the finality pass has overtaken it: start at the bound.
        page = api.query({"begin": _epoch(max(bound, float(cursor["final"]))), "ascending": "yes"})
    else:
        page = api.follow(url)
    for _ in range(MAX_PAGES):
        if not page.items:
            return  # keep the URL: asked again later, it returns what arrived since
        apply.items(page.items, report)
        if page.next_url is None:
            return
        commit(live=page.next_url, live_ts=page.items[-1].timestamp)
        if seconds_left() < SAFETY_SECONDS:
            return
        page = api.follow(page.next_url)


@dataclass(frozen=True)
class Applier:
    sink: EventSink
    concurrency: int

    def items(self, items: list[PageItem], report: IngestReport) -> None:
        """Raises the first failure once all are tried: the cursor stays, the page is read again."""
        events = []
        for item in items:
            if item.event is not None:
                events.append(item.event)
            elif item.error:
                report.poison += 1
                logger.error("unreadable Mailgun event skipped", extra={"error": item.error})
        parts = {event.dedupe_key: IngestReport() for event in events}

        def apply(event: Any) -> None:
            self.sink.apply(event, parts[event.dedupe_key])

        _, failure = fan_out.in_groups(events, lambda event: event.recipient_key, apply, self.concurrency)
        for part in parts.values():
            report.absorb(part)
        if failure is not None:
            raise failure


def _epoch(value: float) -> str:
    return str(int(value))  # whole seconds, floored: at most a second is read again
