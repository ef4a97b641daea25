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


def test_cycles_reuse_the_containers_threads_instead_of_starting_their_own():
    # Given three cycles' batches, each of four independent recipients, applied with four workers
    threads: set[int] = set()
    started = threading.active_count()

    def apply(item: int) -> None:
        threads.add(threading.get_ident())

    for cycle in range(3):
        applied, failure = in_groups(list(range(cycle * 4, cycle * 4 + 4)), lambda item: item, apply, workers=4)
        assert failure is None and len(applied) == 4
    # Then all twelve ran on at most four threads, which stay for the next invocation
    assert len(threads) <= 4
    assert threading.active_count() <= started + 4


def test_a_kill_in_one_group_is_raised_once_nothing_of_the_batch_runs_on():
    # Given a recipient whose apply is killed (a Lambda timeout is a BaseException), submitted
    # first, and another still running when the kill comes back
    killed, never, slow_started = threading.Event(), threading.Event(), threading.Event()
    finished: list[str] = []

    def apply(item: str) -> None:
        if item == "killed":
            # The other apply is running before the kill: on a loaded machine its thread could
            # otherwise start only after the kill came back, and (rightly) never run at all.
            slow_started.wait(timeout=5)
            killed.set()
            raise KeyboardInterrupt
        slow_started.set()
        killed.wait(timeout=5)
        never.wait(timeout=0.2)  # still running well after the kill was raised
        finished.append(item)

    try:
        in_groups(["killed", "slow"], lambda item: item, apply, workers=2)
    except KeyboardInterrupt:
        # Then the kill comes out only after the other recipient's apply has returned
        assert finished == ["slow"]
    else:
        raise AssertionError("the kill was swallowed")
