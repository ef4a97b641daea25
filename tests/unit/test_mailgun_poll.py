"""The Mailgun poll step over the fakes: finality pass, live pass, cursor and watermark."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import MessageState
from sendledger.domain.provider import Provider
from sendledger.providers.mailgun.lane import SOURCE, events_lane
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.usecases.poll import CycleFailed
from tests.unit.fakes import TIMEOUT_REACHED, FakeWorld
from tests.unit.fakes.mailgun import FakeMailgunEvents
from tests.unit.helpers import ALICE, seconds_left, send

FINAL_AFTER = 60
BOB = "bob@example.com"


@pytest.fixture
def mailgun(world: FakeWorld) -> FakeMailgunEvents:
    world.configure(email_provider=Provider.MAILGUN)
    world.configure_provider(MailgunSettings, events_final_after_seconds=FINAL_AFTER)
    events = FakeMailgunEvents(world.clock)
    # the email events come from Mailgun (the SMS log lane stays)
    world.email_events_by(lambda settings, stores: events_lane(settings, stores, events))
    return events


def state(world: FakeWorld, message_id: str) -> MessageState:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message.state


def test_recent_events_are_applied_at_once_but_the_watermark_stops_at_the_finality_bound(world, mailgun):
    message_id = send(world.runtime).view["message_id"]
    sent = world.clock.now()
    mailgun.add("accepted", message_id, ALICE, sent)
    mailgun.add("complained", message_id, ALICE, sent + timedelta(seconds=2))
    world.clock.advance(5)
    report = world.runtime.poll_cycle.run(seconds_left)
    # the live pass applied both: the complaint suppresses within one poll interval
    assert report.applied == 2 and report.suppressed == 1
    assert state(world, message_id) is MessageState.COMPLAINED
    bound = report.started_at - timedelta(seconds=FINAL_AFTER)
    assert world.ledger.poller_state.watermark(SOURCE) == bound  # not the cycle start: not final yet
    world.clock.advance(FINAL_AFTER)
    report = world.runtime.poll_cycle.run(seconds_left)
    # the finality pass reads them again as duplicates and moves the watermark past them
    assert (report.applied, report.duplicates) == (0, 2)
    assert world.ledger.poller_state.watermark(SOURCE) == report.started_at - timedelta(seconds=FINAL_AFTER)
    assert world.ledger.poller_state.watermark(SOURCE) > sent


def test_an_event_that_appears_late_behind_the_live_position_is_applied_by_the_finality_pass(world, mailgun):
    late = send(world.runtime, key="k-late", to=BOB).view["message_id"]
    other = send(world.runtime, key="k-other").view["message_id"]
    sent = world.clock.now()
    # Mailgun stores the bounce late: visible 10 s after it happened, behind a later event
    bounce = {"severity": "permanent", "reason": "bounce", "delivery-status": {"code": 550, "enhanced-code": "5.1.1"}}
    mailgun.add("failed", late, BOB, sent, visible_at=sent + timedelta(seconds=10), **bounce)
    mailgun.add("delivered", other, ALICE, sent + timedelta(seconds=1))
    world.clock.advance(3)
    world.runtime.poll_cycle.run(seconds_left)
    assert state(world, other) is MessageState.DELIVERED
    world.clock.advance(20)
    world.runtime.poll_cycle.run(seconds_left)
    # the live pass follows `next` from after the delivered event: the late one sits behind it
    assert state(world, late) is MessageState.ACCEPTED
    world.clock.advance(FINAL_AFTER)
    report = world.runtime.poll_cycle.run(seconds_left)
    assert state(world, late) is MessageState.BOUNCED and report.suppressed == 1


def test_final_pages_are_followed_and_the_cursor_moves_page_by_page(world, mailgun):
    mailgun.page_limit = 2
    ids = [send(world.runtime, key=f"k{n}", to=f"user{n}@example.com").view["message_id"] for n in range(5)]
    start = world.clock.now()
    for n, message_id in enumerate(ids):
        mailgun.add("delivered", message_id, f"user{n}@example.com", start + timedelta(seconds=n))
    world.clock.advance(FINAL_AFTER + 10)
    commits: list[str] = []
    put = world.ledger.poller_state.put_cursor
    world.ledger.poller_state.put_cursor = lambda *a: (commits.append(a[2]), put(*a))[1]  # type: ignore[method-assign]
    report = world.runtime.poll_cycle.run(seconds_left)
    assert report.applied == 5 and all(state(world, i) is MessageState.DELIVERED for i in ids)
    assert len(commits) >= 3  # one per final page, then the bound
    follows = [request for request in mailgun.requests if isinstance(request, str)]
    assert len(follows) >= 2


def test_a_crash_after_apply_before_the_cursor_commit_reapplies_idempotently(world, mailgun):
    message_id = send(world.runtime).view["message_id"]
    sent = world.clock.now()
    mailgun.add("accepted", message_id, ALICE, sent)
    mailgun.add(
        "failed",
        message_id,
        ALICE,
        sent + timedelta(seconds=1),
        severity="permanent",
        reason="bounce",
        **{"delivery-status": {"code": 550, "enhanced-code": "5.1.1"}},
    )
    world.clock.advance(FINAL_AFTER + 5)
    put = world.ledger.poller_state.put_cursor

    def crash(*_args: object) -> None:
        raise DependencyUnavailable("killed before the cursor commit")

    world.ledger.poller_state.put_cursor = crash  # type: ignore[method-assign]
    with pytest.raises(CycleFailed) as failed:
        world.runtime.poll_cycle.run(seconds_left)
    assert failed.value.report.applied == 2
    assert world.ledger.poller_state.cursor(SOURCE) is None  # nothing committed
    assert world.ledger.poller_state.watermark(SOURCE) is None
    world.ledger.poller_state.put_cursor = put  # type: ignore[method-assign]
    report = world.runtime.poll_cycle.run(seconds_left)
    assert (report.applied, report.duplicates) == (0, 2)  # the same page again: no second effect
    assert state(world, message_id) is MessageState.BOUNCED
    assert world.ledger.recipients.get(f"email:{ALICE}").suppression.suppressed
    assert world.ledger.poller_state.cursor(SOURCE) is not None


def test_without_new_final_events_a_cycle_reads_no_final_range_twice(world, mailgun):
    world.clock.advance(FINAL_AFTER)
    world.runtime.poll_cycle.run(seconds_left)
    mailgun.requests.clear()
    world.runtime.poll_cycle.run(seconds_left)  # same instant: the bound has not moved
    assert len(mailgun.requests) == 1  # the live pass only


def test_an_unknown_send_is_found_by_searching_the_recipient_and_matching_the_user_variable(world, mailgun):
    world.email.then(TIMEOUT_REACHED)
    unknown = send(world.runtime, key="k-unknown", to=BOB).view["message_id"]
    other = send(world.runtime, key="k-other", to=BOB, summary="other").view["message_id"]
    sent = world.clock.now()
    # same recipient, another message, listed first: the search must not take it for the unknown one
    mailgun.add("accepted", other, BOB, sent - timedelta(seconds=1))
    mailgun.add("delivered", other, BOB, sent + timedelta(seconds=1))
    world.clock.advance(3)
    world.runtime.poll_cycle.run(seconds_left)
    # the late `accepted` of the timed-out send lands behind the live position
    mailgun.add("accepted", unknown, BOB, sent, visible_at=sent + timedelta(seconds=5))
    world.clock.advance(5)
    assert state(world, unknown) is MessageState.UNKNOWN
    report = world.runtime.poll_cycle.run(seconds_left)
    assert report.resolved.get("unknown_found_by_search") == 1
    assert state(world, unknown) is MessageState.ACCEPTED  # long before the finality bound passes it
    world.clock.advance(world.settings.unknown_grace_seconds + FINAL_AFTER)
    world.runtime.poll_cycle.run(seconds_left)  # its absence could be proven now: it is not even asked
    assert state(world, unknown) is MessageState.ACCEPTED
    searches = [r for r in mailgun.requests if isinstance(r, dict) and r.get("recipient") == BOB]
    assert searches and all(r["event"] == "accepted" for r in searches)
    assert len(world.email.outbox) == 2  # nothing resent
