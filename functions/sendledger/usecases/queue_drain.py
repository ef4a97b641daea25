"""Drain a queue as a pipeline: receives, applies and deletes overlap, across receive batches.

Sequentially (receive 10, apply them, delete them, receive again) the round trips of receive and
delete and the wait for a batch's slowest apply bound the drain; here only the applies do. The
calling thread coordinates and owns all state; at most `workers` calls run at once, on the
container's pool (kept between invocations).

- Receives (up to 10 messages each) keep about one round of applies waiting.
- Each lane (a recipient) applies its messages one at a time, in the order they were received,
  across receive batches; lanes run in parallel. A lane whose apply failed applies nothing more
  this drain: its later messages stay on the queue, and no new receive starts.
- A message is deleted only after its apply returned (everything derived from it is persisted),
  in batches of 10; a partial batch once nothing else runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any, ParamSpec, TypeVar

from aws_lambda_powertools import Logger

from sendledger.ports.ingestion import EventQueue, QueueMessage
from sendledger.usecases.fan_out import shared_pool

logger = Logger(child=True)

BATCH = 10  # the most one ReceiveMessage or DeleteMessageBatch takes

P = ParamSpec("P")
T = TypeVar("T")

Apply = Callable[[QueueMessage], bool]  # True: applied, delete it; False: leave it (unreadable); raises: failed
Lane = Callable[[QueueMessage], Hashable | None]  # None: independent of every other message


def drain(queue: EventQueue, apply: Apply, lane: Lane, workers: int, out_of_time: Callable[[], bool]) -> bool:
    """True when a receive found nothing new and every message received was applied and deleted.

    Raises the first failure (of an apply, a receive or a delete) once the rest has settled.
    """
    if workers <= 1:
        return _Drain(queue, apply, lane, _Inline(), 1, out_of_time).run()
    return _Drain(queue, apply, lane, shared_pool(workers), workers, out_of_time).run()


class _Inline(Executor):
    """One worker: each call runs on the calling thread when it starts, as a plain loop would."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed over as a pool thread does; a kill is re-raised
            future.set_exception(exc)
        return future


class _Drain:
    def __init__(
        self, queue: EventQueue, apply: Apply, lane: Lane, pool: Executor, workers: int, out_of_time: Callable[[], bool]
    ) -> None:
        self.queue, self.apply, self.lane_of, self.pool = queue, apply, lane, pool
        self.workers, self.out_of_time = workers, out_of_time
        self.running: dict[Future[Any], Callable[[Future[Any]], None]] = {}
        self.held: dict[str, QueueMessage] = {}  # received, not deleted: the latest copy (receipt handle)
        self.left: set[str] = set()  # held, given up for this drain (unreadable, failed, behind a failure)
        self.lanes: dict[Hashable, deque[str]] = {}  # per lane, the message ids waiting, in receipt order
        self.waiting = 0
        self.applying: set[Hashable] = set()  # lanes with an apply running
        self.failed_lanes: set[Hashable] = set()
        self.deletable: list[str] = []  # applied, not yet in a delete
        self.receiving = 0
        self.read_to_end = False
        self.overlap = True  # receive while messages are in progress (see _received)
        self.failure: Exception | None = None

    def run(self) -> bool:
        try:
            while True:
                self._start()
                if not self.running:
                    break
                done, _ = wait(self.running, return_when=FIRST_COMPLETED)
                for future in [future for future in self.running if future in done]:  # in start order
                    self.running.pop(future)(future)
        finally:
            wait(self.running)  # after a kill too, nothing of this drain runs on once it returns
        if self.failure is not None:
            raise self.failure
        return self.read_to_end and not self.held

    # --- what to start ---------------------------------------------------------------------
    def _start(self) -> None:
        """Deletes first (they finish work), then receives (they feed it), then applies."""
        late = self.out_of_time()
        ready = [] if late else [key for key, ids in self.lanes.items() if ids and key not in self.applying]
        idle = not (ready or self.applying or self.receiving)
        while self.deletable and self._free() and (len(self.deletable) >= BATCH or idle):
            self._delete(self.deletable[:BATCH])
            del self.deletable[:BATCH]
        while not late and self._may_receive():
            self.receiving += 1
            self._submit(self._received, self.queue.receive, BATCH)
        for key in ready:
            if not self._free():
                break
            self._apply_next(key)

    def _free(self) -> bool:
        return len(self.running) < self.workers

    def _may_receive(self) -> bool:
        if self.read_to_end or self.failure is not None or not self._free():
            return False
        if not self.overlap:
            return not self.receiving and len(self.held) == len(self.left)
        return self.waiting + BATCH * self.receiving < self.workers

    def _submit(self, done: Callable[[Future[Any]], None], fn: Callable[..., Any], *args: Any) -> None:
        self.running[self.pool.submit(fn, *args)] = done

    def _apply_next(self, key: Hashable) -> None:
        message_id = self.lanes[key].popleft()
        self.waiting -= 1
        self.applying.add(key)
        self._submit(lambda future: self._applied(key, message_id, future), self.apply, self.held[message_id])

    def _delete(self, ids: list[str]) -> None:
        self._submit(lambda future: self._deleted(ids, future), self.queue.delete, [self.held[i] for i in ids])

    # --- what finished ---------------------------------------------------------------------
    def _received(self, future: Future[list[QueueMessage]]) -> None:
        self.receiving -= 1
        if self._failed(future):
            return
        fresh, again = [], False
        for message in future.result():
            if message.message_id in self.left:
                continue  # failed or unreadable earlier in this drain
            if message.message_id in self.held:
                # Visible again while we hold it: the queue's visibility timeout is shorter than our
                # hold. Delete with this receipt; receive only once nothing is in progress.
                self.held[message.message_id] = message
                again, self.overlap = True, False
                continue
            fresh.append(message)
        if not fresh and not again:
            self.read_to_end = True  # empty, or only messages this drain already gave up on
        for message in fresh:
            self.held[message.message_id] = message
            key = self.lane_of(message)
            key = ("message", message.message_id) if key is None else key
            if key in self.failed_lanes:
                self.left.add(message.message_id)  # behind a failed event of the same recipient
                continue
            self.lanes.setdefault(key, deque()).append(message.message_id)
            self.waiting += 1

    def _applied(self, key: Hashable, message_id: str, future: Future[bool]) -> None:
        self.applying.discard(key)
        if self._failed(future):
            self.failed_lanes.add(key)
            behind = self.lanes.pop(key, deque())
            self.waiting -= len(behind)
            self.left.update([message_id, *behind])
        elif future.result():
            self.deletable.append(message_id)  # persisted: it may be deleted now
        else:
            self.left.add(message_id)
        if key in self.lanes and not self.lanes[key]:
            del self.lanes[key]

    def _deleted(self, ids: list[str], future: Future[list[str]]) -> None:
        not_deleted = set(ids) if self._failed(future) else set(future.result())
        for message_id in ids:
            if message_id not in not_deleted:
                del self.held[message_id]
                continue
            self.left.add(message_id)
            if future.exception() is None:
                logger.warning(
                    "delete failed; the message will be applied again as a duplicate",
                    extra={"sqs_message_id": message_id},
                )

    def _failed(self, future: Future[Any]) -> bool:
        error = future.exception()
        if error is None:
            return False
        if not isinstance(error, Exception):
            raise error  # a kill (timeout, OOM) is final: nothing more starts
        self.failure = self.failure or error
        return True
