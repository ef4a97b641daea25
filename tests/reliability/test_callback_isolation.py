"""One caller's receiver cannot stall another caller's callbacks (the review's reproduction).

Two callers share the callback queue and function, as deployed: the function's two concurrent
pollers (max concurrency 2), each its own container (its own memory), batches of 10, the
deployed timeouts, on the fake clock. Caller A's receiver accepts every POST and never answers;
caller B's answers at once. A has a backlog (four sends for each of B's, interleaved).

B's callbacks in a batch with A's are POSTed at once (one lane per caller); a container that
has not yet seen A fail spends one lane's share of the batch (not a POST timeout) on A's first
record, and A's other records rest, so B's callbacks queued behind A's wait no longer than a
poll more: every one of them arrives within the no-fault p95 plus one poll interval
(docs/status-out.md, "One caller's receiver"). On the build the review tried, B waited for
every one of A's records ahead of it (10 s each); with the batch waiting for A's lane, one
timeout (11.1 s).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import pytest

from sendledger import bootstrap
from sendledger.domain.clock import parse_iso
from sendledger.handlers import callbacks
from tests.reliability.event_sources import SqsEventSource, queue_bodies
from tests.reliability.faults import FIGURES
from tests.reliability.status_out_world import DEPLOYED, StatusOutWorld, TimedEndpoint, status_out_world
from tests.support import receiver as r
from tests.support.fakes import caller_id
from tests.support.status_out import register_receiver

B_PRINCIPAL = "arn:aws:sts::123456789012:assumed-role/billing-service/task-7"
B_SECRET = "b-callback-secret"
POLLERS = 2  # the callbacks' event source: max_concurrency=2 (infra/status_out.py)
# Lambda's SQS pollers long-poll: a visible message is handed over within a poll's answer; the
# harness's pollers take one the moment they are free, so one poll is allowed on top of that.
POLL_INTERVAL_SECONDS = 1.0
A_SENDS_PER_B_SEND, B_SENDS = 4, 4
A_EVENTS = 2 * A_SENDS_PER_B_SEND * B_SENDS  # sending, accepted: two events per send
# Each event once, and one probe per rest per container over the whole schedule
A_POSTS_AT_MOST = A_EVENTS + POLLERS * (DEPLOYED.callback_max_attempts + 1)


@pytest.fixture(scope="module")
def world() -> Iterator[StatusOutWorld]:
    with status_out_world() as status_out:
        yield status_out


def poller(world: StatusOutWorld, endpoints: list[TimedEndpoint]) -> SqsEventSource:
    """One more container of the callbacks function: its own runtime (caches, state) and clock'd
    HTTP (added to `endpoints`)."""
    runtime = bootstrap.build_status_out(world.runtime.settings)
    # A real POST to B's loopback receiver must never outlast the real wait, even on a loaded machine
    # (it would count as B's timeout), and B's lane must be done before A's POST moves the shared
    # clock past the lanes' share (B's records left would be queued again for the next batch):
    # the black hole then costs this much real time per POST to A.
    endpoint = TimedEndpoint(world.clock, real_wait=1.0)
    endpoints.append(endpoint)
    runtime.clock, runtime.receivers.endpoint = world.clock, endpoint
    source = SqsEventSource(
        world.resources.callback_queue_url,
        world.resources.callback_queue_arn,
        lambda event, context: callbacks.lambda_handler(event, context, runtime),
        world.clock,
        batch_size=10,
        function_timeout_seconds=world.deployed.callbacks_timeout_seconds,
    )
    endpoint.source = source
    return source


def run_concurrently(world: StatusOutWorld, pollers: list[SqsEventSource]) -> None:
    """The pollers side by side on the fake clock: the one free earliest takes the next batch,
    at the time it is free (the clock is set back to it: what another poller did meanwhile is
    in the queue already, its delays counted from its own later time)."""
    free_at: list[datetime] = [world.clock.now()] * len(pollers)
    for _ in range(2000):
        index = min(range(len(pollers)), key=lambda i: free_at[i])
        world.clock.current = free_at[index]
        if pollers[index].invoke():
            free_at[index] = world.clock.now()
            # A's receiver hammered (each kept POST costs real time): fail now, not after the schedule
            assert len(world.receiver.requests) <= A_POSTS_AT_MOST, "A's receiver got a POST per record"
            continue
        visible = pollers[index].next_visible()
        if visible is None:
            return
        free_at[index] = max(visible, free_at[index])
    raise AssertionError("the callback queue did not empty")


def history(world: StatusOutWorld, tag: str) -> None:
    """A's backlog with B's sends among it: A, A, A, A, B, A, A, A, A, B, ..."""
    n = 0
    for b in range(B_SENDS):
        for who in ["a"] * A_SENDS_PER_B_SEND + ["b"]:
            n += 1
            principal = B_PRINCIPAL if who == "b" else None
            body = {"channel": "email", "to": f"{who}-{n}@example.com", "template": {"id": "alert", "version": "1"}}
            answer = world.shared.client(
                "POST",
                "/v1/messages",
                {**body, "params": {"summary": "s"}},
                headers={"Idempotency-Key": f"{tag}-{b}-{n}"},
                **({"principal": principal} if principal else {}),
            )
            assert answer.status == 202, answer
            world.clock.advance(0.2)


def b_latencies(receiver: r.Receiver) -> list[float]:
    """Seconds from each of B's events to its first POST (signed at the fake clock's time)."""
    first: dict[str, float] = {}
    for got in receiver.requests:
        if got.event_id and got.signed_at is not None and got.event_id not in first:
            created = parse_iso(json.loads(got.body)["created_at"]).timestamp()
            first[got.event_id] = got.signed_at - created
    return list(first.values())


@dataclass
class Run:
    b_latencies: list[float]  # seconds from each of B's events to its first POST
    a_posts: int
    unanswered: int  # POSTs (A's or B's) that got no status within their deadline


def run(world: StatusOutWorld, *, a_plan: r.Plan, tag: str) -> Run:
    world.shared.fresh()
    world.fresh()
    with r.Receiver(B_SECRET) as b_receiver:
        register_receiver(world.runtime.settings, caller_id(B_PRINCIPAL), b_receiver.url, B_SECRET)
        history(world, tag)
        world.stream.drain()
        world.receiver.plan = a_plan
        endpoints: list[TimedEndpoint] = []
        run_concurrently(world, [poller(world, endpoints) for _ in range(POLLERS)])
        assert not b_receiver.invalid()
        unanswered = sum(endpoint.unanswered for endpoint in endpoints)
        return Run(b_latencies(b_receiver), len(world.receiver.requests), unanswered)


def black_holed_for(posts: int) -> r.Plan:
    """A receiver that keeps its first `posts` POSTs, whatever their events, then answers: one
    that hung and came back."""
    kept = [0]

    def plan(_event_id: str, _attempt: int) -> str:
        kept[0] += 1
        return r.BLACKHOLE if kept[0] <= posts else r.OK

    return plan


@pytest.fixture(scope="module")
def p95(world: StatusOutWorld) -> float:
    """B's no-fault p95: both receivers answer."""
    baseline = run(world, a_plan=r.always(r.OK), tag="ok").b_latencies
    assert len(baseline) == 2 * B_SENDS  # sending, accepted: two events per send
    FIGURES["isolation_b_median_no_fault_seconds"] = round(statistics.median(baseline), 2)
    return statistics.quantiles(baseline, n=20)[-1]


def test_a_black_holed_receiver_does_not_delay_another_callers_callbacks(world, p95):
    # Given B's no-fault p95
    # When A's receiver accepts and never answers, with A's backlog ahead of B's events
    faulted_run = run(world, a_plan=r.always(r.BLACKHOLE), tag="bh")
    faulted, a_posts = faulted_run.b_latencies, faulted_run.a_posts
    # Then every one of B's callbacks arrives within the no-fault p95 plus one poll
    assert len(faulted) == 2 * B_SENDS
    assert max(faulted) <= p95 + POLL_INTERVAL_SECONDS, (sorted(faulted), p95)
    # And A's receiver was probed, not hammered: one POST per rest per container over the whole
    # schedule (its 32 events would otherwise be 6 attempts each)
    assert 1 <= a_posts <= POLLERS * (world.deployed.callback_max_attempts + 1), a_posts
    FIGURES["isolation_b_p95_no_fault_seconds"] = round(p95, 2)
    FIGURES["isolation_b_max_with_a_black_holed_seconds"] = round(max(faulted), 2)
    FIGURES["isolation_b_median_with_a_black_holed_seconds"] = round(statistics.median(faulted), 2)
    FIGURES["isolation_a_posts"] = a_posts


def test_a_receiver_that_comes_back_gets_every_event_without_a_storm_and_delays_nobody(world, p95):
    # Given A's receiver keeps its first four POSTs (each container's first contact and probe), then answers
    hung = 4
    back = run(world, a_plan=black_holed_for(hung), tag="back")
    faulted, a_posts = back.b_latencies, back.a_posts
    # Then B's callbacks arrive within the no-fault p95 plus one poll
    assert len(faulted) == 2 * B_SENDS and max(faulted) <= p95 + POLL_INTERVAL_SECONDS, (sorted(faulted), p95)
    # And every one of A's events reached it, none in the DLQ: at least once
    sent_to_a = Counter(got.event_id for got in world.receiver.requests)
    answered = set(world.receiver.processed())
    assert len(answered) == A_EVENTS and answered == set(sent_to_a)
    assert not queue_bodies(world.resources.callback_dlq_url)
    # And no duplicate storm when it came back: an event is POSTed again only after a POST that
    # got no answer in time (the four it kept; on a loaded machine also one cut short by its
    # lane's share, which the receiver may have processed: then, and only then, twice)
    assert back.unanswered >= hung and a_posts - A_EVENTS <= back.unanswered, (a_posts, back.unanswered)
    processed_twice = sum(len(gots) - 1 for gots in world.receiver.processed().values())
    assert processed_twice <= back.unanswered - hung, sent_to_a.most_common(3)
