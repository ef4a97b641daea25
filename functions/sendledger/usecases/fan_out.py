"""Apply a batch with bounded concurrency: independent recipients in parallel, one recipient in order.

A poll cycle's drain rate, not one transaction's round trip, then bounds how far behind the
poller can fall. Events of one recipient stay sequential because they compete for the same
items (suppression state, the transient-bounce window), where order decides the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")


def in_groups(
    items: Sequence[Item], key: Callable[[Item], Hashable | None], apply: Callable[[Item], None], workers: int
) -> tuple[list[Item], BaseException | None]:
    """Apply every item; a group stops at its first failure (later items of that recipient wait).

    Returns the items applied, in input order, and the first failure (None if every item applied).
    Items whose key is None are independent of everything, each in a group of its own.
    """
    groups: dict[object, list[int]] = {}
    for index, item in enumerate(items):
        group = key(item)
        groups.setdefault(("single", index) if group is None else group, []).append(index)
    applied = [False] * len(items)
    failures: list[tuple[int, BaseException]] = []

    def run(indexes: list[int]) -> None:
        for index in indexes:
            try:
                apply(items[index])
            except Exception as exc:
                failures.append((index, exc))  # list.append is atomic: no lock needed
                return
            applied[index] = True

    if workers <= 1 or len(groups) <= 1:
        for indexes in groups.values():
            run(indexes)
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(groups)), thread_name_prefix="apply") as pool:
            list(pool.map(run, groups.values()))
    first = min(failures, key=lambda failure: failure[0])[1] if failures else None
    return [item for index, item in enumerate(items) if applied[index]], first
