"""Fault schedules over status out: nothing the ledger committed is lost between it and the receiver.

Each schedule starts from an empty ledger, commits the same history (three sends with their
SES events, a bounce that suppresses, an admin suppression), runs the publisher over the
stream and the callbacks over their queue with its faults armed, then recovers (faults gone,
the stream drained, the callback queue emptied on the fake clock) and checks the invariants of
tests/reliability/status_out_world.py. Faults: PutEvents at the wire (entries refused in a 200,
the call failing, throttled), the publisher killed at each of its requests, the receiver
answering 5xx, timing out, resetting, never answering, and the callbacks killed after a POST.
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.reliability.event_sources import _queue, queue_bodies
from tests.reliability.faults import FIGURES, Fault, connect_timeout, read_timeout
from tests.reliability.killer import RequestKiller
from tests.reliability.status_out_world import (
    REAL_WAIT_SECONDS,
    StatusOutWorld,
    every,
    put_events_error,
    put_events_partly_failing,
    status_out_world,
)
from tests.support import receiver as r

PUT = "PutEvents"
SOAK = os.environ.get("SENDLEDGER_SOAK") == "1"


@dataclass(frozen=True)
class Schedule:
    name: str
    bus: Callable[[], list[Fault]] = list  # armed while the publisher first drains the stream
    receiver: r.Plan = field(default=r.always(r.OK))
    kill_after_posts: int = 0
    expect: dict[str, Any] = field(default_factory=dict)  # figures the run must show (its fault really bit)


def refused(code: str, **where: Any) -> Callable[[], list[Fault]]:
    """PutEvents answers 200 with every entry of the matching calls refused with `code`."""
    return lambda: [Fault(PUT, "send", put_events_partly_failing(every(code)), **where)]


def never_answers_some() -> r.Plan:
    """About a third of the events never get an answer (by id), and always the first one seen:
    at least one waits out its attempts in the DLQ, whatever the ids are."""
    first: list[str] = []

    def plan(event_id: str, _attempt: int) -> str:
        first.append(event_id)
        return r.BLACKHOLE if event_id == first[0] or int(event_id[:8], 16) % 3 == 0 else r.OK

    return plan


SCHEDULES = [
    # (no expectation on duplicate callbacks: on a loaded machine a 204 can come after the wait)
    Schedule("no-fault", expect={"duplicates_on_bus": 0}),
    # PutEvents answers 200 with FailedEntryCount > 0: the record is handed back and put again
    Schedule("entries-throttled-in-a-200", bus=refused("ThrottlingException", call=1)),
    Schedule("entries-internal-failure-six-calls", bus=refused("InternalFailure", call=None, attempts=6)),
    Schedule(
        "entries-refused-on-a-later-call", bus=refused("ThrottlingException", call=4), expect={"duplicates_on_bus": 1}
    ),
    # The whole call fails: the SDK's retries, then the record comes back
    Schedule(
        "call-throttled-once",
        bus=lambda: [Fault(PUT, "send", put_events_error("ThrottlingException", 400), attempts=1)],
    ),
    Schedule(
        "call-500-past-the-sdk-retries",
        bus=lambda: [Fault(PUT, "send", put_events_error("InternalException", 500), call=1)],
    ),
    Schedule("call-unreachable", bus=lambda: [Fault(PUT, "send", connect_timeout, call=None, attempts=7)]),
    # Put, but the answer lost: the retry puts the same ids again
    Schedule(
        "answer-lost-after-put",
        bus=lambda: [Fault(PUT, "after", read_timeout, call=2)],
        expect={"duplicates_on_bus": 1},
    ),
    # Past the mapping's retries: the records' coordinates go to the on-failure destination
    Schedule(
        "bus-down-past-the-retries",
        bus=lambda: [Fault(PUT, "send", put_events_error("InternalException", 500), call=None)],
        expect={"given_up": 1},
    ),
    # The receiver
    Schedule("receiver-5xx-twice", receiver=r.first(2, r.FAIL)),
    Schedule("receiver-resets-the-connection", receiver=r.first(1, r.RESET)),
    Schedule("receiver-answers-after-the-timeout", receiver=r.first(1, r.SLOW), expect={"duplicate_callbacks": 1}),
    Schedule("receiver-never-answers-some", receiver=never_answers_some(), expect={"dead_lettered": 1}),
    Schedule("callbacks-killed-after-posting", kill_after_posts=3, expect={"duplicate_callbacks": 1}),
]


@pytest.fixture(scope="module")
def world() -> Iterator[StatusOutWorld]:
    with status_out_world() as status_out:
        yield status_out


def run(world: StatusOutWorld, schedule: Schedule) -> Any:
    world.shared.fresh()
    world.fresh()
    world.make_history()
    faults = schedule.bus()
    world.receiver.plan = schedule.receiver
    world.endpoint.kill_after_posts = schedule.kill_after_posts
    # Given the faults armed while the publisher drains the stream and the callbacks run
    with world.bus.armed(*faults):
        world.stream.drain()
    world.deliver()
    # When they are gone and everything recovers
    world.recover()
    # Then nothing the ledger committed is lost, forged or undelivered
    seen = world.check()
    assert all(f.fired for f in faults), f"{schedule.name}: a fault never fired"
    for figure, at_least in schedule.expect.items():
        assert (seen[figure] >= at_least) if at_least else (seen[figure] == 0), (schedule.name, seen)
    FIGURES["status_out_schedules"] += 1
    return seen


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: s.name)
def test_status_out_fault_schedule(world, schedule):
    run(world, schedule)


def test_the_publisher_killed_at_each_of_its_requests_loses_nothing(world, monkeypatch):
    # Given one committed history and a dry run that counts the publisher's requests over it
    killer = RequestKiller()
    killer.install(monkeypatch)
    world.shared.fresh()
    world.fresh()
    world.make_history()
    with killer.recording() as log:
        world.stream.invoke()
    requests = len(log)
    assert requests >= 5 and "events.PutEvents" in log, log  # GetItem for receipts, PutEvents per change
    world.recover()
    world.check()
    points = range(1, requests + 1) if SOAK else sorted({1, 2, requests // 2, requests - 1, requests})
    for index in points:
        for after in (False, True):
            # When the publisher dies before or after that request (the batch comes back, bisected)
            world.replay()
            with killer.killing(index, after) as kill:
                world.stream.invoke()
            assert kill.fired, (index, after)
            FIGURES["status_out_publisher_kills"] += 1
            world.recover()
            # Then every change reached the bus and the receiver all the same
            world.check()
            assert world.stream.bisections >= 1


# The README's schedule: a failed callback is tried again after 60, 120, 240, 480, 960 s
# (CALLBACK_RETRY_BASE_SECONDS doubling), CALLBACK_MAX_ATTEMPTS = 6 attempts spanning 31 minutes.
# While a caller's receiver fails, it rests as long (at most 15 minutes at a time) and its other
# events wait with it, unattempted; an event still waiting after the span goes to the DLQ.
DOCUMENTED_DELAYS = [60, 120, 240, 480, 960]
DOCUMENTED_ATTEMPTS = 6
SPAN_SECONDS = sum(DOCUMENTED_DELAYS)


def test_a_receiver_that_never_answers_is_probed_on_the_documented_backoff_then_its_events_go_to_the_dlq(world):
    # Given the deployed budget: a full batch of events, and a receiver that never answers
    deployed = world.deployed
    assert deployed.callback_max_attempts == DOCUMENTED_ATTEMPTS and deployed.callback_retry_base_seconds == 60
    world.shared.fresh()
    world.fresh()
    batch = world.callbacks.batch_size
    for n in range(batch // 2):  # each send is two events of its caller's: sending, accepted
        body = {"channel": "email", "to": f"blackholed-{n}@example.com", "template": {"id": "alert", "version": "1"}}
        answer = world.shared.client(
            "POST", "/v1/messages", {**body, "params": {"summary": "s"}}, headers={"Idempotency-Key": f"bh-{n}"}
        )
        assert answer.status == 202, answer
    world.stream.drain()
    world.receiver.plan = r.always(r.BLACKHOLE)
    world.endpoint.real_wait = 0.05  # the receiver keeps every POST: its whole timeout passes on the fake clock
    started = world.clock.now()
    try:
        # When the callbacks run as their event source does, until the queue is empty
        world.deliver()
    finally:
        world.endpoint.real_wait = REAL_WAIT_SECONDS
    # Then no invocation timed out, and the receiver got one POST per rest, not one per event:
    # the rests follow the backoff (60, 120, 240, 480 s, then at most 15 minutes)
    assert world.callbacks.timeouts == 0 and world.callbacks.failed_invocations == 0
    posts = sorted(got.signed_at for got in world.receiver.requests if got.signed_at is not None)
    assert all(got.valid for got in world.receiver.requests)
    per_event = Counter(got.event_id for got in world.receiver.requests)
    gaps = [later - earlier for earlier, later in itertools.pairwise(posts)]
    for gap, delay in zip(gaps, DOCUMENTED_DELAYS[:4], strict=False):
        assert delay <= gap <= delay + deployed.callbacks_timeout_seconds + 1, gaps
    assert DOCUMENTED_ATTEMPTS - 1 <= len(posts) <= DOCUMENTED_ATTEMPTS + 1, (
        str([p - posts[0] for p in posts]),
        per_event,
    )
    assert max(per_event.values()) <= DOCUMENTED_ATTEMPTS
    # And every event waits in the DLQ, none in the queue, after about 31 minutes: the one whose
    # attempts ran out, and the ones that waited the whole span for a receiver that never came back
    dead = dead_letters(world.resources.callback_dlq_url)
    assert len(dead) == batch and set(dead.values()) <= {"exhausted", "gave-up"}
    assert not queue_bodies(world.resources.callback_queue_url)
    elapsed = (world.clock.now() - started).total_seconds()
    assert SPAN_SECONDS <= elapsed <= SPAN_SECONDS + DOCUMENTED_ATTEMPTS * deployed.callbacks_timeout_seconds + 60, (
        elapsed
    )
    FIGURES["status_out_blackholed_callbacks"] += len(dead)
    world.check()


def dead_letters(url: str) -> dict[str, str]:
    """Event id → why, for every record in a callback DLQ (moto's backend: nothing received)."""
    return {
        json.loads(m.body)["detail"]["event_id"]: m.message_attributes["sendledger-reason"]["StringValue"]
        for m in _queue(url)._messages
    }
