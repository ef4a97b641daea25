"""Lambda's event sources for the status-out functions, as AWS documents them, on moto.

- ``StreamEventSource`` (the publisher's DynamoDB Streams mapping): records in shard order, in
  batches; a full success checkpoints past the batch; a partial batch response
  (``batchItemFailures``) checkpoints before the lowest failed sequence number and retries
  from it (with bisection on, only the records from it on); a failed invocation (an error,
  a kill) splits the batch in two and retries each half in order; a batch past its retry
  attempts goes to the on-failure destination (its coordinates) and the shard moves on.
  Halves and remainders inherit the failed batch's attempt count plus one, so a batch reaches
  the on-failure destination no later than AWS would send it there.
- ``SqsEventSource`` (the callbacks' SQS mapping): receives up to a batch, invokes, deletes
  what the response does not report failed; a failed invocation deletes nothing (the
  messages come back when their visibility ends). Its context's remaining time runs on the
  test's clock, and an invocation still running past the function timeout is killed.

Both take what moto holds as the service's state; ``sqs_on(clock)`` makes moto's SQS keep
visibility on the test's fake clock, so backoff delays are jumped over, never slept through.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sqs import models as sqs_models

from local import moto_sqs
from local.status_out import first_failure, sqs_record, stream_event
from tests.reliability.killer import LambdaKilled
from tests.reliability.status_events import TapReader
from tests.support.fakes import FakeClock, FakeLambdaContext

REGION = "us-east-1"
Handler = Callable[[dict[str, Any], Any], Any]


# --- time -----------------------------------------------------------------------------------
@contextmanager
def sqs_on(clock: FakeClock) -> Iterator[None]:
    """moto's SQS reads the fake clock: visibility timeouts and delays expire when the test moves it."""
    real_seconds = sqs_models.unix_time

    def seconds(dt: Any = None) -> float:
        return real_seconds(dt) if dt is not None else clock.now().timestamp()

    with pytest.MonkeyPatch.context() as patch:
        for module in (sqs_models, moto_sqs):  # local/moto_sqs.py counts visible messages itself
            patch.setattr(module, "unix_time", seconds)
            patch.setattr(module, "unix_time_millis", lambda dt=None: seconds(dt) * 1000.0)
        yield


@dataclass
class ClockedContext(FakeLambdaContext):
    """A Lambda context whose remaining time is read off the test's clock."""

    clock: FakeClock | None = None
    deadline: datetime | None = None

    def get_remaining_time_in_millis(self) -> int:
        assert self.clock is not None and self.deadline is not None
        return max(0, int((self.deadline - self.clock.now()).total_seconds() * 1000))

    @property
    def timed_out(self) -> bool:
        return self.get_remaining_time_in_millis() <= 0


# --- the publisher's stream mapping -----------------------------------------------------------
@dataclass
class Batch:
    records: list[dict[str, Any]]
    attempts: int = 0  # failed invocations so far


@dataclass
class StreamEventSource:
    reader: TapReader
    handler: Handler
    stream_arn: str
    batch_size: int = 100
    max_retry_attempts: int = 10
    bisect: bool = True
    on_failure: list[dict[str, Any]] = field(default_factory=list)  # DDBStreamBatchInfo of batches given up
    invocations: int = 0
    failed_invocations: int = 0
    partial_responses: int = 0
    bisections: int = 0
    redeliveries: int = 0
    _retrying: deque[Batch] = field(default_factory=deque)  # at the head of the shard, in order
    _waiting: deque[dict[str, Any]] = field(default_factory=deque)
    _last: list[dict[str, Any]] = field(default_factory=list)

    def backlog(self) -> int:
        self._read()
        return sum(len(b.records) for b in self._retrying) + len(self._waiting)

    def invoke(self, limit: int | None = None) -> bool:
        """One invocation with the batch at the head of the shard; False when there is none."""
        self._read()
        if self._retrying:
            batch = self._retrying.popleft()
        elif self._waiting:
            size = min(limit or self.batch_size, self.batch_size)
            batch = Batch([self._waiting.popleft() for _ in range(min(size, len(self._waiting)))])
        else:
            return False
        self.invocations += 1
        self._last = batch.records
        try:
            response = self.handler(
                stream_event(batch.records), FakeLambdaContext(function_name="sendledger-publisher")
            )
        except (Exception, LambdaKilled):
            self.failed_invocations += 1
            self._failed(batch)
            return True
        failed = first_failure(response)
        if failed is None:
            return True  # checkpoint past the batch
        self.partial_responses += 1
        at = next(i for i, r in enumerate(batch.records) if r["dynamodb"]["SequenceNumber"] == failed)
        self._retry(Batch(batch.records[at:], batch.attempts))
        return True

    def drain(self, max_invocations: int = 200) -> None:
        for _ in range(max_invocations):
            if not self.invoke():
                return
        raise AssertionError(f"the stream did not drain in {max_invocations} invocations")

    def redeliver_last(self) -> bool:
        """At least once: the last batch handed to the function comes again (its checkpoint was lost)."""
        if not self._last:
            return False
        self.redeliveries += 1
        self._retrying.appendleft(Batch(list(self._last)))
        return True

    def _failed(self, batch: Batch) -> None:
        if self.bisect and len(batch.records) > 1:
            self.bisections += 1
            half = len(batch.records) // 2
            self._retry(Batch(batch.records[:half], batch.attempts), Batch(batch.records[half:], batch.attempts))
        else:
            self._retry(Batch(batch.records, batch.attempts))

    def _retry(self, *batches: Batch) -> None:
        for batch in reversed(batches):
            batch.attempts += 1
            if batch.attempts > self.max_retry_attempts:
                self.on_failure.append(self._batch_info(batch.records))
                continue
            self._retrying.appendleft(batch)

    def _batch_info(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "shardId": "shard-0",
            "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
            "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"],
            "batchSize": len(records),
            "streamArn": self.stream_arn,
        }

    def _read(self) -> None:
        for record in self.reader.take():
            change = dict(record["dynamodb"])
            created = change.get("ApproximateCreationDateTime")
            if isinstance(created, str):  # the tap's JSON copy of moto's datetime
                change["ApproximateCreationDateTime"] = int(datetime.fromisoformat(created).timestamp())
            self._waiting.append({**record, "dynamodb": change, "eventSourceARN": self.stream_arn})


def given_up(source: StreamEventSource) -> set[str]:
    """Sequence numbers of the records the mapping sent to its on-failure destination."""
    covered = set()
    for info in source.on_failure:
        start, end = int(info["startSequenceNumber"]), int(info["endSequenceNumber"])
        covered |= {str(n) for n in range(start, end + 1)}
    return covered


# --- the callbacks' SQS mapping ---------------------------------------------------------------
@dataclass
class SqsEventSource:
    queue_url: str
    queue_arn: str
    handler: Handler
    clock: FakeClock
    batch_size: int
    function_timeout_seconds: float
    invocations: int = 0
    failed_invocations: int = 0
    timeouts: int = 0
    deleted: int = 0
    context: ClockedContext | None = None  # the invocation running now

    def __post_init__(self) -> None:
        self.sqs = boto3.client("sqs", region_name=REGION)

    def invoke(self) -> bool:
        """Receive one batch and invoke the function with it; False when nothing was visible."""
        self.clock.advance(0.001)  # a message made visible "now" is visible a moment later
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])
        if not messages:
            return False
        self.invocations += 1
        self.context = ClockedContext(
            function_name="sendledger-callbacks",
            clock=self.clock,
            deadline=self.clock.now() + _seconds(self.function_timeout_seconds),
        )
        event = {"Records": [sqs_record(m, self.queue_arn, REGION) for m in messages]}
        try:
            response = self.handler(event, self.context)
        except (Exception, LambdaKilled):
            self.failed_invocations += 1
            return True  # nothing deleted: every message comes back after its visibility
        finally:
            timed_out, self.context = self.context.timed_out, None
        if timed_out:
            self.timeouts += 1
            return True
        failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
            )
            self.deleted += len(done)
        return True

    def next_visible(self) -> datetime | None:
        """When the queue next has a message to hand out (None: empty)."""
        # a message is handed out once it is both visible (after a receive) and no longer delayed (SendMessage)
        times = [max(m.visible_at, m.delayed_until) for m in _queue(self.queue_url)._messages]
        if not times:
            return None
        return datetime.fromtimestamp(
            max(min(times) / 1000.0, self.clock.now().timestamp()), tz=self.clock.now().tzinfo
        )

    def run(self, until: datetime | None = None, max_invocations: int = 500) -> None:
        """Poll as the mapping does, the clock jumping to the next visible message, until the
        queue is empty (or the clock would pass ``until``)."""
        for _ in range(max_invocations):
            if self.invoke():
                continue
            visible = self.next_visible()
            if visible is None or (until is not None and visible > until):
                return
            self.clock.current = visible
        left = [
            (m.approximate_receive_count, max(m.visible_at, m.delayed_until)) for m in _queue(self.queue_url)._messages
        ]
        raise AssertionError(
            f"the callback queue did not empty in {max_invocations} invocations: now {self.clock.now().timestamp()}, "
            f"left (receives, visible at) {left[:5]} of {len(left)}, invocations {self.invocations}"
        )

    def check_deadline(self) -> None:
        """Lambda ends an invocation at its timeout, wherever it is."""
        if self.context is not None and self.context.timed_out:
            raise LambdaKilled("the callbacks function timed out")


def _seconds(value: float) -> Any:
    from datetime import timedelta

    return timedelta(seconds=value)


def _queue(url: str) -> Any:
    return sqs_models.sqs_backends[DEFAULT_ACCOUNT_ID][REGION].get_queue(url.rsplit("/", 1)[1])


def queue_depth(url: str) -> int:
    """Messages a queue holds, visible or in flight."""
    return len(_queue(url)._messages)


def empty_queue(url: str) -> None:
    """Drop every message (PurgeQueue is limited to one call a minute)."""
    queue = _queue(url)
    queue._messages.clear()
    queue.pending_messages.clear()


def queue_bodies(url: str, start: int = 0) -> list[dict[str, Any]]:
    """Every message a queue holds (from the `start`-th on, in the order sent), read from moto's
    backend: visible or not, nothing received."""
    return [json.loads(m.body) for m in _queue(url)._messages[start:]]
