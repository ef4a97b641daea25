"""Drain a queue as a pipeline: receives, applies and deletes overlap, across receive batches.

Sequentially (receive 10, apply them, delete them, receive again) the round trips of receive and
delete and the wait for a batch's slowest apply bound the drain; here only the applies do. At most
`workers` calls run at once: the calling thread and `workers - 1` threads of the container's pool
(kept between invocations) each take the next planned call themselves, then record what it did
and plan what follows, under one lock.

- Receives (up to 10 messages each) keep about one round of applies waiting.
- Each lane (a recipient) applies its messages one at a time, in the order they were received,
  across receive batches; lanes run in parallel. A lane whose apply failed applies nothing more
  this drain: its later messages stay on the queue, and no new receive starts.
- A message is deleted only after its apply returned (everything derived from it is persisted),
  in batches of 10; a partial batch once nothing else runs.

Why no coordinating thread: handing each call to a pool thread and its outcome back adds two
thread wake-ups per call, each a context switch that costs CPU. A worker that finishes a call
takes the next one itself, and wakes another only when more than one call waits. Against an
endpoint that answers at once (benchmarks/ingest_cpu.py, one run each): 22.0 -> 20.5 voluntary
switches per applied event, where a plain loop makes 1.2; most are the threads handing the GIL
to one another inside botocore and urllib3, which no scheduling here removes.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger

from sendledger.ports.ingestion import EventQueue, QueueMessage
from sendledger.usecases.fan_out import shared_pool

logger = Logger(child=True)

BATCH = 10  # the most one ReceiveMessage or DeleteMessageBatch takes

Apply = Callable[[QueueMessage], bool]  # True: applied, delete it; False: leave it (unreadable); raises: failed
Lane = Callable[[QueueMessage], Hashable | None]  # None: independent of every other message


def drain(queue: EventQueue, apply: Apply, lane: Lane, workers: int, out_of_time: Callable[[], bool]) -> bool:
    """True when a receive found nothing new and every message received was applied and deleted.

    Raises the first failure (of an apply, a receive or a delete) once the rest has settled.
    """
    return _Drain(queue, apply, lane, max(workers, 1), out_of_time).run()


@dataclass(frozen=True)
class _Call:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    done: Callable[[Future[Any]], None]  # records the outcome, under the drain's lock


def _made(call: _Call) -> Future[Any]:
    """The call's outcome, as a pool thread hands it over (a kill is kept and re-raised by `done`)."""
    future: Future[Any] = Future()
    try:
        future.set_result(call.fn(*call.args))
    except BaseException as exc:
        future.set_exception(exc)
    return future


class _Drain:
    def __init__(
        self, queue: EventQueue, apply: Apply, lane: Lane, workers: int, out_of_time: Callable[[], bool]
    ) -> None:
        self.queue, self.apply, self.lane_of = queue, apply, lane
        self.workers, self.out_of_time = workers, out_of_time
        self.lock = threading.Condition()  # guards everything below; idle workers wait on it
        self.planned: deque[_Call] = deque()  # not yet taken by a worker
        self.running = 0  # calls planned or in progress (at most `workers`)
        self.idle = 0  # workers waiting for a call
        self.killed: BaseException | None = None
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
        self._start()
        pool = shared_pool(self.workers) if self.workers > 1 else None
        helpers = [pool.submit(self._work) for _ in range(self.workers - 1)] if pool else []
        try:
            self._work()
        finally:
            wait(helpers)  # after a kill too, nothing of this drain runs on once it returns
        if self.killed is not None:
            raise self.killed
        if self.failure is not None:
            raise self.failure
        return self.read_to_end and not self.held

    def _work(self) -> None:
        """One worker: take the next planned call, make it, record its outcome, plan what follows."""
        with self.lock:
            try:
                while self.killed is None and (self.planned or self.running):
                    if not self.planned:
                        self.idle += 1
                        self.lock.wait()
                        self.idle -= 1
                        continue
                    call = self.planned.popleft()
                    if self.planned and self.idle:
                        self.lock.notify()  # more than this one waits: one more worker takes it
                    self.lock.release()
                    try:
                        outcome = _made(call)
                    finally:
                        self.lock.acquire()
                    self.running -= 1
                    if self.killed is None:
                        call.done(outcome)
                        self._start()
            except BaseException as exc:  # a kill (timeout, OOM) is final: nothing more starts
                self.killed = self.killed or exc
            self.lock.notify_all()  # the drain ended: the idle workers end too

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
        return self.running < self.workers

    def _may_receive(self) -> bool:
        if self.read_to_end or self.failure is not None or not self._free():
            return False
        if not self.overlap:
            return not self.receiving and len(self.held) == len(self.left)
        return self.waiting + BATCH * self.receiving < self.workers

    def _submit(self, done: Callable[[Future[Any]], None], fn: Callable[..., Any], *args: Any) -> None:
        self.planned.append(_Call(fn, args, done))
        self.running += 1

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
