"""A batch of queued callbacks, one lane per caller: one caller's slow receiver holds its own lane.

The records of one caller are tried in order, one after the other (a receiver gets its events
in the order queued, and one that fails makes its later records rest with it); the lanes of
different callers run side by side, so a slow receiver delays no other caller's callbacks in
the batch. Each lane has the same share of the batch (`CallbackPolicy.lane_share_seconds`): its
POSTs end by then, and its records not tried by then are queued again unattempted, so the batch
ends within one share whatever a receiver does, and the records queued behind it (other
callers' among them) are not held up for a receiver's whole timeout. Records nobody receives,
and ones that are not ours, are settled first without a POST.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from sendledger.domain.callback_schedule import Queued, Share
from sendledger.domain.callbacks import ForeignBusEvent, MalformedBusEvent, from_bus_event
from sendledger.domain.clock import Clock
from sendledger.ports.status_out import CallbackQueue
from sendledger.usecases.callbacks import Attempt, CallbackPolicy, Delivery, Receivers, deliver_callback

Outcome = Attempt | Exception  # an exception: the record was not settled (it comes back by itself)


def deliver_batch(
    records: Sequence[Queued],
    *,
    account_id: str,
    policy: CallbackPolicy,
    receivers: Receivers,
    queue: CallbackQueue,
    clock: Clock,
    seconds_left: Callable[[], float] | None = None,
) -> list[Outcome]:
    """Each record's attempt, in the records' order."""

    def one(queued: Queued, share: Share | None) -> Outcome:
        try:
            return deliver_callback(
                queued,
                account_id=account_id,
                policy=policy,
                receivers=receivers,
                queue=queue,
                clock=clock,
                seconds_left=seconds_left() if seconds_left is not None else None,
                share=share,
            )
        except Exception as exc:
            return exc

    def lane(indexes: list[int], share: Share | None = None) -> list[tuple[int, Outcome]]:
        done = []
        for index in indexes:
            outcome = one(records[index], share)
            if share is not None and isinstance(outcome, Attempt) and outcome.outcome is Delivery.DELIVERED:
                share = Share(share.ends_at, answered=True)
            done.append((index, outcome))
        return done

    lanes = _lanes(records, account_id)
    results: dict[int, Outcome] = {}
    for index, outcome in lane(lanes.pop("", [])):
        results[index] = outcome
    if lanes:
        share = Share(clock.now() + timedelta(seconds=policy.lane_share_seconds))
        with ThreadPoolExecutor(max_workers=len(lanes), thread_name_prefix="callback-lane") as pool:
            for done in pool.map(lambda indexes: lane(indexes, share), lanes.values()):
                results.update(done)
    return [results[index] for index in range(len(records))]


def _lanes(records: Sequence[Queued], account_id: str) -> dict[str, list[int]]:
    """Record indexes by owner, in order; "" for the ones no receiver gets (settled first)."""
    lanes: dict[str, list[int]] = {"": []}
    for index, queued in enumerate(records):
        try:
            owner = from_bus_event(queued.body, account_id).owner or ""
        except (MalformedBusEvent, ForeignBusEvent):
            owner = ""
        lanes.setdefault(owner, []).append(index)
    return lanes
