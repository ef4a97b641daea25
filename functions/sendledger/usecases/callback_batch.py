"""A batch of queued callbacks, one lane per caller: one caller's slow receiver holds its own lane.

The records of one caller are tried in order, one after the other (a receiver gets its events
in the order queued, and one that fails makes its later records rest with it); the lanes of
different callers run side by side, so a receiver that takes the whole POST timeout delays no
other caller's callbacks in the batch. Records nobody receives, and ones that are not ours,
are settled first without a POST.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from sendledger.domain.callback_schedule import Queued
from sendledger.domain.callbacks import ForeignBusEvent, MalformedBusEvent, from_bus_event
from sendledger.domain.clock import Clock
from sendledger.ports.status_out import CallbackQueue
from sendledger.usecases.callbacks import Attempt, CallbackPolicy, Receivers, deliver_callback

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

    def one(queued: Queued) -> Outcome:
        try:
            return deliver_callback(
                queued,
                account_id=account_id,
                policy=policy,
                receivers=receivers,
                queue=queue,
                clock=clock,
                seconds_left=seconds_left() if seconds_left is not None else None,
            )
        except Exception as exc:
            return exc

    def lane(indexes: list[int]) -> list[tuple[int, Outcome]]:
        return [(index, one(records[index])) for index in indexes]

    lanes = _lanes(records, account_id)
    results: dict[int, Outcome] = {}
    for index, outcome in lane(lanes.pop("", [])):
        results[index] = outcome
    if lanes:
        with ThreadPoolExecutor(max_workers=len(lanes), thread_name_prefix="callback-lane") as pool:
            for done in pool.map(lane, lanes.values()):
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
