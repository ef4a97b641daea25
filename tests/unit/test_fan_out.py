"""Bounded-concurrency apply: independent recipients in parallel, one recipient's events in order."""

import threading

from sendledger.usecases.fan_out import in_groups


def test_one_recipients_items_apply_in_order_while_recipients_overlap():
    # Given two recipients whose first items wait for each other (only possible when they run at once)
    both_started = threading.Barrier(2, timeout=5)
    order: list[str] = []

    def apply(item: tuple[str, int]) -> None:
        recipient, step = item
        if step == 0:
            both_started.wait()
        order.append(f"{recipient}{step}")

    items = [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2)]
    # When they are applied with two workers
    applied, failure = in_groups(items, lambda item: item[0], apply, workers=2)
    # Then everything applied, each recipient's items in their order
    assert failure is None and applied == items
    assert [o for o in order if o[0] == "a"] == ["a0", "a1", "a2"]
    assert [o for o in order if o[0] == "b"] == ["b0", "b1"]


def test_a_failure_stops_only_its_recipient_and_is_reported():
    # Given recipient a's second item fails
    def apply(item: tuple[str, int]) -> None:
        if item == ("a", 1):
            raise ConnectionError("throttled")

    items = [("a", 0), ("b", 0), ("a", 1), ("a", 2), ("b", 1)]
    applied, failure = in_groups(items, lambda item: item[0], apply, workers=4)
    # Then a's later item waits for the next cycle, b is unaffected, and the failure comes back
    assert applied == [("a", 0), ("b", 0), ("b", 1)]
    assert isinstance(failure, ConnectionError)


def test_items_without_a_recipient_are_independent_and_the_earliest_failure_wins():
    def apply(item: int) -> None:
        if item in (3, 1):
            raise ValueError(item)

    applied, failure = in_groups([0, 1, 2, 3], lambda item: None, apply, workers=1)
    assert applied == [0, 2] and isinstance(failure, ValueError) and failure.args == (1,)
