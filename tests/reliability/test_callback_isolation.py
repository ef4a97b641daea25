"""One caller's receiver cannot stall another caller's callbacks (the review's reproduction).

Two callers share the callback queue and function, as deployed: the function's two concurrent
pollers (max concurrency 2), each its own container (its own memory), batches of 10, the
deployed timeouts, on the fake clock. Caller A's receiver accepts every POST and never answers;
caller B's answers at once. A has a backlog (four sends for each of B's, interleaved).

B's callbacks in a batch with A's are POSTed at once (one lane per caller); a container that
has not yet seen A fail spends one POST timeout on A's first record before its next batch, and
both containers meet A's backlog first, so B's callbacks behind theirs wait at most that one
timeout, once: the bound is the no-fault p95 plus one callback timeout plus one poll interval
(docs/status-out.md, "One caller's receiver"). On the build the review tried, B waited for
every one of A's records ahead of it (10 s each).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from datetime import datetime

import pytest

from sendledger import bootstrap
from sendledger.domain.clock import parse_iso
from sendledger.handlers import callbacks
from tests.reliability.event_sources import SqsEventSource
from tests.reliability.faults import FIGURES
from tests.reliability.status_out_world import StatusOutWorld, TimedEndpoint, status_out_world
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


@pytest.fixture(scope="module")
def world() -> Iterator[StatusOutWorld]:
    with status_out_world() as status_out:
        yield status_out


def poller(world: StatusOutWorld) -> SqsEventSource:
    """One more container of the callbacks function: its own runtime (caches, state) and clock'd HTTP."""
    runtime = bootstrap.build_status_out(world.services.settings)
    # A real POST to B's loopback receiver must never outlast the real wait, even on a loaded machine
    # (it would count as B's timeout): the black hole then costs this much real time per POST to A.
    endpoint = TimedEndpoint(world.clock, real_wait=0.5)
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


def run(world: StatusOutWorld, *, a_plan: r.Plan, tag: str) -> tuple[list[float], int]:
    world.shared.fresh()
    world.fresh()
    with r.Receiver(B_SECRET) as b_receiver:
        register_receiver(world.services.settings, caller_id(B_PRINCIPAL), b_receiver.url, B_SECRET)
        history(world, tag)
        world.stream.drain()
        world.receiver.plan = a_plan
        run_concurrently(world, [poller(world) for _ in range(POLLERS)])
        assert not b_receiver.invalid()
        return b_latencies(b_receiver), len(world.receiver.requests)


def test_a_black_holed_receiver_does_not_delay_another_callers_callbacks(world):
    # Given the no-fault run: both receivers answer
    baseline, _ = run(world, a_plan=r.always(r.OK), tag="ok")
    assert len(baseline) == 2 * B_SENDS  # sending, accepted: two events per send
    p95 = statistics.quantiles(baseline, n=20)[-1]
    # When A's receiver accepts and never answers, with A's backlog ahead of B's events
    faulted, a_posts = run(world, a_plan=r.always(r.BLACKHOLE), tag="bh")
    # Then every one of B's callbacks arrives within the no-fault p95 plus A's first timeout
    # (once per container) plus one poll
    timeout = world.deployed.callback_timeout_seconds
    assert len(faulted) == 2 * B_SENDS
    assert max(faulted) <= p95 + timeout + POLL_INTERVAL_SECONDS, (sorted(faulted), p95)
    # And the ones that shared a batch with A's records, or came after the containers learned,
    # arrive within the no-fault p95 plus one poll: at least half of them
    prompt = [latency for latency in faulted if latency <= p95 + POLL_INTERVAL_SECONDS]
    assert len(prompt) >= len(faulted) // 2, (sorted(faulted), p95)
    # And A's receiver was probed, not hammered: one POST per rest per container over the whole
    # schedule (its 32 events would otherwise be 6 attempts each)
    assert 1 <= a_posts <= POLLERS * (world.deployed.callback_max_attempts + 1), a_posts
    FIGURES["isolation_b_p95_no_fault_seconds"] = round(p95, 2)
    FIGURES["isolation_b_max_with_a_black_holed_seconds"] = round(max(faulted), 2)
    FIGURES["isolation_b_median_with_a_black_holed_seconds"] = round(statistics.median(faulted), 2)
    FIGURES["isolation_a_posts"] = a_posts
