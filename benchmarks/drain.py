"""Drain speedup: one poller invocation draining a batch, concurrently vs one event at a time.

Latency model: every AWS call takes 10 ms more than moto needs to emulate it, as an in-region
round trip does. The 10 ms are injected by sleeping before moto's in-process request handling
(``BotocoreStubber.__call__``, the `before-send` handler every client goes through) and outside
the lock that serializes moto's requests (local/moto_serial.py), so a thread waiting on a call
leaves the CPU and the emulator to the others, as a real socket wait does.

The batch is one SES Delivery event for each of N fresh recipients (no two events share a
recipient or a message), put on the SES events queue, drained by one scheduled invocation of
the real `poller` handler. Only the queue drain inside that invocation is timed (the SMS log
read, due work and metrics are the same fixed work on both sides). The two sides differ only in
POLL_APPLY_CONCURRENCY: 1 ("one event at a time") vs the value the stack deploys. The figure
is the ratio of median drain wall times, rounds interleaved.

moto's emulation is CPU work under one lock, so in-process it cannot overlap across threads,
while DynamoDB serves independent items in parallel. The barred figure is therefore the speedup
of the drain time outside the emulation (wall time minus the time spent inside moto, measured
on each side); the raw wall-time ratio is reported beside it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import boto3

from benchmarks import ours
from benchmarks.aws import World, lambda_context, reset_caches
from benchmarks.environment import ACCOUNT_ID, REGION, lambda_environment
from benchmarks.ingestion import POLLER, Provider, load
from benchmarks.timing import EmulatorMeter

LATENCY_SECONDS = 0.010
EVENTS = 30
ROUNDS = 3  # per side, interleaved
CONCURRENCY_ENV = "POLL_APPLY_CONCURRENCY"


@contextlib.contextmanager
def added_latency(seconds: float) -> Iterator[None]:
    """Every in-process moto request waits `seconds` before it is emulated."""
    from moto.core.botocore_stubber import BotocoreStubber

    import local.moto_serial  # noqa: F401  (the lock this sleep must stay outside of)

    original = BotocoreStubber.__call__

    def call(stubber: Any, *args: Any, **kwargs: Any) -> Any:
        if stubber.enabled:
            time.sleep(seconds)
        return original(stubber, *args, **kwargs)

    BotocoreStubber.__call__ = call  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        BotocoreStubber.__call__ = original  # type: ignore[method-assign]


@contextlib.contextmanager
def timed_drain(meter: EmulatorMeter, into: list[tuple[float, float]]) -> Iterator[None]:
    """Time the SES queue drain the poll cycle runs: (wall seconds, of which inside moto's emulation)."""
    from sendledger.usecases import queued_events as poll

    original = poll.drain

    def drain(*args: Any, **kwargs: Any) -> bool:
        start, emulated = time.perf_counter(), meter.seconds
        try:
            return original(*args, **kwargs)
        finally:
            into.append((time.perf_counter() - start, meter.seconds - emulated))

    poll.drain = drain  # type: ignore[assignment]
    try:
        yield
    finally:
        poll.drain = original  # type: ignore[assignment]


def measure(world: World, events: int = EVENTS, rounds: int = ROUNDS) -> dict[str, Any]:
    poller, missing = load(POLLER)
    if poller is None:
        return {"reason": missing}
    deployed = lambda_environment("sendledger-poller")[CONCURRENCY_ENV]
    sides = {"one_at_a_time": "1", "concurrent": deployed}
    walls: dict[str, list[float]] = {side: [] for side in sides}
    emulation: dict[str, list[float]] = {side: [] for side in sides}
    previous = os.environ.get(CONCURRENCY_ENV)
    try:
        for i in range(rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for side in order:
                wall, emulated = _one_drain(world, poller.lambda_handler, events, sides[side])
                walls[side].append(wall)
                emulation[side].append(emulated)
    finally:
        if previous is None:
            os.environ.pop(CONCURRENCY_ENV, None)
        else:
            os.environ[CONCURRENCY_ENV] = previous
        reset_caches()
    median = {side: statistics.median(values) for side, values in walls.items()}
    outside = {
        side: statistics.median(wall - emulated for wall, emulated in zip(walls[side], emulation[side], strict=True))
        for side in sides
    }
    return {
        "method": (
            f"one scheduled poller invocation draining {events} SES Delivery events of {events} distinct "
            f"recipients; only the queue drain is timed; {rounds} rounds per side, interleaved"
        ),
        "latency_model": f"every AWS call takes {LATENCY_SECONDS * 1000:g} ms more (sleep before moto's emulation)",
        "events": events,
        "concurrency": {side: int(value) for side, value in sides.items()},
        "drain_median_ms": {side: round(value * 1000, 1) for side, value in median.items()},
        "drain_moto_emulation_median_ms": {
            side: round(statistics.median(values) * 1000, 1) for side, values in emulation.items()
        },
        "drain_outside_emulation_median_ms": {side: round(value * 1000, 1) for side, value in outside.items()},
        "speedup": round(outside["one_at_a_time"] / outside["concurrent"], 3),
        "speedup_wall_with_emulation": round(median["one_at_a_time"] / median["concurrent"], 3),
    }


def _one_drain(world: World, handler: Callable[..., Any], events: int, concurrency: str) -> tuple[float, float]:
    """Fresh tables, a batch of independent events on the queue, one timed invocation."""
    world.empty_tables()
    world.refresh_watermarks()
    os.environ[CONCURRENCY_ENV] = concurrency
    provider = Provider(world)  # rebuilds the runtime: the setting is read again
    try:
        queue_url = world.resources.ses_events_queue_url
        _cycle(handler)  # settle: SMS cursor, empty queue
        bodies = _independent_deliveries(provider, queue_url, events)
        _cycle(handler)  # settle again: whatever the sends left due
        sqs = boto3.client("sqs", region_name=REGION)
        for body in bodies:
            sqs.send_message(QueueUrl=queue_url, MessageBody=body)
        from moto.core.model_instances import reset_model_data

        reset_model_data()  # moto keeps a rollback copy of the table per transaction: drop them
        gc.collect()
        drains: list[tuple[float, float]] = []
        with EmulatorMeter().installed() as meter, added_latency(LATENCY_SECONDS), timed_drain(meter, drains):
            answer = _cycle(handler)
        if int(answer.get("applied", 0) or 0) != len(bodies) or len(drains) != 1:
            raise RuntimeError(f"drain applied {answer.get('applied')} of {len(bodies)} events: {answer}")
        return drains[0]
    finally:
        provider.close()


def _independent_deliveries(provider: Provider, queue_url: str, events: int) -> list[str]:
    from benchmarks.ingestion import _drain_queue

    run = uuid.uuid4().hex[:8]
    for i in range(events):
        status, _, body = ours.post("/v1/messages", ours.email_body(f"drain-{run}-{i}@example.com"), f"dr-{run}-{i}")
        if status != 202:
            raise RuntimeError(f"send failed: {status} {body}")
    provider.simulator.flush()
    bodies = [m["Body"] for m in _drain_queue(queue_url) if _event_type(m["Body"]) == "Delivery"]
    if len(bodies) != events:
        raise RuntimeError(f"expected {events} Delivery events, the simulator produced {len(bodies)}")
    return bodies


def _event_type(body: str) -> str:
    try:
        return str(json.loads(json.loads(body)["Message"])["eventType"])
    except Exception:
        return "unknown"


def _cycle(handler: Callable[..., Any]) -> dict[str, Any]:
    from local.scheduler import scheduled_event

    event = scheduled_event(now=datetime.now(UTC), region=REGION, account_id=ACCOUNT_ID)
    answer = handler(event, lambda_context("sendledger-poller", 60.0))
    return answer if isinstance(answer, dict) else {}
