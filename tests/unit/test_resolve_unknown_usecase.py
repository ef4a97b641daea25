"""`unknown` is evidence, not permission: a send is repeated only once its absence is proven."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from sendledger.domain.clock import iso
from sendledger.domain.events import EventKind
from sendledger.domain.messages import DueKind, MessageState
from sendledger.ports.reports import Since
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.poll import CycleReport
from sendledger.usecases.results import Accepted
from tests.unit.fakes import THROTTLED, TIMEOUT_LOST, TIMEOUT_REACHED, FakeWorld, Reply
from tests.unit.helpers import poll_due_work, send, ses_event


def timed_out(world: FakeWorld, reply: Reply = TIMEOUT_LOST) -> tuple[str, datetime]:
    """A send whose provider call timed out: (message id, when it was sent)."""
    world.email.then(reply)
    result = send(world.runtime)
    assert isinstance(result, Accepted) and result.view["state"] == "unknown"
    return result.message.message_id, world.clock.now()


def state_of(world: FakeWorld, message_id: str) -> MessageState:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message.state


def test_absence_is_proven_only_once_the_watermark_passes_send_time_plus_grace(world: FakeWorld):
    message_id, sent_at = timed_out(world)
    grace = timedelta(seconds=world.settings.unknown_grace_seconds)
    world.clock.advance(grace.total_seconds() + 60)
    # The poller drained SES exactly up to send + grace: an event could still be in flight
    world.ledger.poller_state.set_watermark("ses", sent_at + grace)
    assert poll_due_work(world) == {"unknown_waiting": 1}
    assert state_of(world, message_id) is MessageState.UNKNOWN and len(world.email.calls) == 1
    # Past it: every event SES emitted for the send is applied, none proved acceptance
    world.ledger.poller_state.set_watermark("ses", sent_at + grace + timedelta(seconds=1))
    assert poll_due_work(world) == {"absence_proven": 1, "resent_accepted": 1}
    assert [call.message_id for call in world.email.calls] == [message_id, message_id], "same id"
    message = world.ledger.messages.get(message_id)
    assert message is not None and message.state is MessageState.ACCEPTED and message.attempt == 2
    # Once: the next cycles find nothing to do, and the client's retry replays the new answer
    assert poll_due_work(world) == {}
    assert len(world.email.calls) == 2
    assert send(world.runtime).view["state"] == "accepted"


def test_without_a_watermark_it_stays_unknown_then_unresolved(world: FakeWorld):
    message_id, _ = timed_out(world)
    world.clock.advance(2000)
    assert poll_due_work(world) == {"unknown_waiting": 1}
    world.clock.advance(world.settings.unknown_max_age_seconds)
    assert poll_due_work(world) == {"unresolved": 1}
    assert state_of(world, message_id) is MessageState.UNRESOLVED
    assert len(world.email.calls) == 1


def test_a_send_event_proves_acceptance_and_nothing_is_resent(world: FakeWorld):
    message_id, sent_at = timed_out(world, TIMEOUT_REACHED)
    world.runtime.sink.apply(ses_event(EventKind.SEND, message_id, sent_at), IngestReport())
    assert state_of(world, message_id) is MessageState.ACCEPTED
    world.clock.advance(2000)
    world.ledger.poller_state.set_watermark("ses", world.clock.now())
    assert poll_due_work(world) == {"unknown_already_resolved": 1}
    assert len(world.email.calls) == 1 and world.ledger.due_work.count(DueKind.UNKNOWN) == 0


def test_a_marker_falling_due_after_the_resolution_reports_when_it_was_resolved(world: FakeWorld):
    # Resolved by SES's Send event 2 s after the send, delivered 1 s later; the marker falls due long after
    message_id, sent_at = timed_out(world, TIMEOUT_REACHED)
    accepted_at, delivered_at = sent_at + timedelta(seconds=2), sent_at + timedelta(seconds=3)
    world.clock.advance(2)
    world.runtime.sink.apply(ses_event(EventKind.SEND, message_id, accepted_at), IngestReport())
    world.clock.advance(1)
    delivery = ses_event(EventKind.DELIVERY, message_id, delivered_at)
    world.runtime.sink.apply(delivery, IngestReport())
    world.clock.advance(2000)
    world.ledger.poller_state.set_watermark("ses", world.clock.now())
    report = CycleReport()
    world.runtime.poll_cycle.due_work.run(lambda: 300.0, report)
    # Then the cycle says when the unknown was resolved (and what the message is now), not just that it was
    (settled,) = report.resolved_messages
    assert settled.since == Since(MessageState.DELIVERED, accepted_at)
    assert settled.as_json() == {
        "message_id": message_id,
        "outcome": "unknown_already_resolved",
        "state": "delivered",
        "since": iso(accepted_at),
    }


def test_an_event_landing_while_the_poller_decides_blocks_the_resend(world: FakeWorld, monkeypatch):
    # The poller read the message as unknown; SES's Send event for it lands before the poller writes
    message_id, sent_at = timed_out(world, TIMEOUT_REACHED)
    world.clock.advance(2000)
    world.ledger.poller_state.set_watermark("ses", world.clock.now())
    real = world.ledger.poller_state.watermark

    def watermark_then_event(source: str):
        event = ses_event(EventKind.SEND, message_id, sent_at)
        world.runtime.sink.apply(event, IngestReport())
        return real(source)

    monkeypatch.setattr(world.ledger.poller_state, "watermark", watermark_then_event)
    assert poll_due_work(world) == {"unknown_moved_on": 1}
    assert len(world.email.calls) == 1, "the event on the receipt proves the first attempt was accepted"
    assert state_of(world, message_id) is MessageState.ACCEPTED


def test_late_evidence_of_the_first_attempt_stops_a_queued_retry(world: FakeWorld):
    # Attempt 1 reached SES but timed out; absence looked proven and the resend was throttled
    message_id, sent_at = timed_out(world, TIMEOUT_REACHED)
    world.email.then(THROTTLED, THROTTLED, THROTTLED, THROTTLED)
    world.clock.advance(1000)
    world.ledger.poller_state.set_watermark("ses", world.clock.now())
    assert poll_due_work(world) == {"absence_proven": 1, "resent_pending": 1}
    # Then SES's Send event for attempt 1 arrives after all
    world.runtime.sink.apply(ses_event(EventKind.SEND, message_id, sent_at), IngestReport())
    world.clock.advance(120)
    poll_due_work(world)
    assert state_of(world, message_id) is MessageState.ACCEPTED
    assert len(world.email.outbox) == 1, "one copy reached the recipient"


def test_a_crash_between_intent_and_outcome_is_unknown_after_the_lease(world: FakeWorld, monkeypatch):
    def crash(outcome):
        raise RuntimeError("the Lambda died before the outcome write")

    monkeypatch.setattr(world.ledger.messages, "record_outcome", crash)
    with pytest.raises(RuntimeError):
        send(world.runtime)
    monkeypatch.undo()
    [in_flight] = world.ledger.due_work.items(DueKind.INFLIGHT, None, 10)
    assert poll_due_work(world) == {}, "not before the lease ends"
    world.clock.advance(61)
    assert poll_due_work(world) == {"lease_expired": 1, "unknown_waiting": 1}
    assert state_of(world, in_flight.message_id) is MessageState.UNKNOWN
    assert len(world.email.calls) == 1
