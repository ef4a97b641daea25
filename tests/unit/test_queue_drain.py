"""The pipelined queue drain: one recipient's messages in order across receive batches, deletes
only after apply, a failed recipient's later messages left on the queue."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest

from sendledger.ports.ingestion import QueueMessage
from sendledger.usecases.queue_drain import drain


class ScriptedQueue:
    """Answers each receive with the next scripted batch (then nothing); records deletes."""

    def __init__(self, *batches: list[str]) -> None:
        self.batches = [[QueueMessage(body, f"receipt-{body}", body) for body in batch] for batch in batches]
        self.receives = 0
        self.deleted: list[str] = []
        self.lock = threading.Lock()

    def receive(self, max_messages: int) -> list[QueueMessage]:
        with self.lock:
            self.receives += 1
            return self.batches.pop(0) if self.batches else []

    def delete(self, messages: list[QueueMessage]) -> list[str]:
        with self.lock:
            self.deleted += [message.message_id for message in messages]
        return []

    def in_flight(self) -> int:
        return 0


class Recorder:
    """Applies "recipient:step" bodies: the recipient's first step is slow, `failing` ones raise."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.failing = failing
        self.lock = threading.Lock()
        self.order: dict[str, list[str]] = defaultdict(list)  # per recipient, applies finished
        self.running: dict[str, int] = defaultdict(int)
        self.overlaps: list[str] = []  # a recipient's message started while another of its ran
        self.finished: set[str] = set()

    def apply(self, message: QueueMessage) -> bool:
        recipient, step = message.body.split(":")
        with self.lock:
            self.running[recipient] += 1
            if self.running[recipient] > 1:
                self.overlaps.append(message.body)
        time.sleep(0.05 if step == "1" else 0.001)  # the next batches arrive meanwhile
        with self.lock:
            self.running[recipient] -= 1
            if message.body in self.failing:
                raise ConnectionError(f"throttled: {message.body}")
            self.order[recipient].append(message.body)
            self.finished.add(message.body)
        return True


def recipient(message: QueueMessage) -> str:
    return message.body.split(":")[0]


def test_one_recipients_messages_apply_in_order_across_receive_batches():
    # Given recipient a's messages spread over three receive batches, b's over two
    queue = ScriptedQueue(["a:1", "b:1"], ["a:2", "b:2", "a:3"], ["a:4"])
    recorder = Recorder()
    # When the queue is drained with four workers (the later batches arrive while a:1 still runs)
    drained = drain(queue, recorder.apply, recipient, workers=4, out_of_time=lambda: False)
    # Then each recipient's messages applied one at a time, in receipt order, and all were deleted
    assert recorder.overlaps == []
    assert recorder.order["a"] == ["a:1", "a:2", "a:3", "a:4"]
    assert recorder.order["b"] == ["b:1", "b:2"]
    assert drained and sorted(queue.deleted) == ["a:1", "a:2", "a:3", "a:4", "b:1", "b:2"]


def test_a_failed_recipients_later_messages_are_neither_applied_nor_deleted():
    # Given a's first message fails after its later ones were received in other batches
    queue = ScriptedQueue(["a:1", "b:1"], ["a:2", "b:2"], ["a:3"])
    recorder = Recorder(failing=frozenset({"a:1"}))
    deleted_before_applied: list[str] = []
    delete = queue.delete

    def checked_delete(messages: list[QueueMessage]) -> list[str]:
        deleted_before_applied.extend(m.body for m in messages if m.body not in recorder.finished)
        return delete(messages)

    queue.delete = checked_delete  # type: ignore[method-assign]
    # When the queue is drained
    with pytest.raises(ConnectionError):
        drain(queue, recorder.apply, recipient, workers=4, out_of_time=lambda: False)
    # Then b is unaffected, a's later messages wait on the queue, and nothing went before its apply
    assert recorder.order["b"] == ["b:1", "b:2"] and recorder.order["a"] == []
    assert sorted(queue.deleted) == ["b:1", "b:2"]
    assert deleted_before_applied == []


def test_read_to_end_only_when_everything_received_was_deleted():
    # An unreadable message (apply answers False) stays on the queue: not read to end
    queue = ScriptedQueue(["a:1", "poison:1"])
    assert not drain(queue, lambda m: not m.body.startswith("poison"), recipient, workers=4, out_of_time=lambda: False)
    assert queue.deleted == ["a:1"]
    # Out of time before anything was applied: nothing deleted, not read to end
    queue = ScriptedQueue(["a:1"])
    assert not drain(queue, lambda m: True, recipient, workers=1, out_of_time=lambda: queue.receives > 0)
    assert queue.deleted == []


def test_a_message_received_again_while_held_is_applied_once_and_deleted_with_its_latest_receipt():
    # Given a queue whose visibility timeout is shorter than the drain's hold: a:1 comes back
    queue = ScriptedQueue(["a:1"], ["a:1"])
    queue.batches[1] = [QueueMessage("a:1", "receipt-again", "a:1")]
    receipts: list[str] = []
    delete = queue.delete

    def recording_delete(messages: list[QueueMessage]) -> list[str]:
        receipts.extend(m.receipt_handle for m in messages)
        return delete(messages)

    queue.delete = recording_delete  # type: ignore[method-assign]
    recorder = Recorder()
    assert drain(queue, recorder.apply, recipient, workers=4, out_of_time=lambda: False)
    assert recorder.order["a"] == ["a:1"] and receipts == ["receipt-again"]


class SlowFirstReceive(ScriptedQueue):
    """The first receive takes a while: every worker is idle, waiting, when its batch arrives."""

    def receive(self, max_messages: int) -> list[QueueMessage]:
        if not self.receives:
            time.sleep(0.05)
        return super().receive(max_messages)


def test_distinct_recipients_apply_in_parallel_up_to_the_workers_and_no_further():
    # Given eight recipients' messages in one receive batch, each apply waiting for three others
    queue = SlowFirstReceive([f"{name}:2" for name in "abcdefgh"])
    lock, running, most = threading.Lock(), [0], [0]
    four_at_once = threading.Barrier(4, timeout=5)

    def apply(message: QueueMessage) -> bool:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            four_at_once.wait()  # only four applies running together get past this
        finally:
            with lock:
                running[0] -= 1
        return True

    # When the queue is drained with four workers
    drained = drain(queue, apply, recipient, workers=4, out_of_time=lambda: False)
    # Then the applies ran four at a time, never five, and every message was deleted
    assert most[0] == 4
    assert drained and len(queue.deleted) == 8


def test_a_kill_ends_the_drain_only_once_the_apply_running_beside_it_returned():
    # Given the draining thread's apply is killed (a BaseException, as a timeout kill) while
    # another worker's apply still runs
    queue = ScriptedQueue(["a:1", "b:1", "c:1"])
    drainer, other_started, finished = threading.get_ident(), threading.Event(), []

    def apply(message: QueueMessage) -> bool:
        if threading.get_ident() == drainer:
            assert other_started.wait(5)
            raise KeyboardInterrupt
        other_started.set()
        time.sleep(0.05)
        finished.append(message.body)
        return True

    # When the queue is drained with two workers
    with pytest.raises(KeyboardInterrupt):
        drain(queue, apply, recipient, workers=2, out_of_time=lambda: False)
    # Then the other apply returned before the drain did, the third never started, nothing was deleted
    assert len(finished) == 1
    assert queue.deleted == []
