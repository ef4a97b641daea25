"""When a queued callback is tried, per caller: its own attempt count and a circuit per receiver.

A callback's attempt number travels with it (a message attribute, `ATTEMPTS_ATTRIBUTE`), not in
SQS's receive count: a failed attempt queues the event again with one attempt more and the
backoff as its delay, and a record put back without an attempt (its caller's circuit is open,
or the invocation had no time left for it) keeps the count it had. SQS delays a message 15
minutes at most; a longer wait is a first hop with `DUE_ATTRIBUTE` saying when the attempt is
due, and a record received before then is queued again for the rest.

A caller whose receiver failed is given a rest (`CircuitBreakers`, per container): until it
ends, that caller's records are put back unattempted, each costing one SQS call instead of a
POST, so a receiver that never answers holds the function for one POST per rest, not one per
record, and other callers' records go on. After the rest one record is tried
again (a probe); a failure doubles the rest, an answer closes the circuit.

Each caller's lane has a share of the batch (`LANE_SHARE_SECONDS`, `Share`): no POST of it waits
past the share's end, so a batch holds the function no longer than that for any one receiver,
and other callers' records behind it (in the queue) wait at most one share more.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from sendledger.domain.callbacks import retry_delay_seconds
from sendledger.domain.callers import CallerId
from sendledger.domain.values import value

ATTEMPTS_ATTRIBUTE = "sendledger-attempts"
DUE_ATTRIBUTE = "sendledger-due-at"  # unix seconds: the attempt is not due before
MAX_QUEUE_DELAY_SECONDS = 900  # SQS's longest DelaySeconds
MAX_REST_SECONDS = MAX_QUEUE_DELAY_SECONDS  # the longest a caller's circuit stays open at a time
# The longest a batch waits on one caller's receiver: about one poll of the queue by Lambda, so
# what another caller has queued behind it waits no more than a poll longer than it would anyway.
LANE_SHARE_SECONDS = 1.0


@value
class Queued:
    """A callback record as the queue holds it: the bus event, untouched, and its schedule."""

    body: str
    attempts: int = 0  # attempts already made (0: fresh from the bus)
    due_at: datetime | None = None  # its next attempt is not due before this

    def after_attempt(self, due_at: datetime) -> Queued:
        return Queued(self.body, self.attempts + 1, due_at)

    def put_back(self, due_at: datetime | None) -> Queued:
        """The same attempt, later: nothing was tried."""
        return Queued(self.body, self.attempts, due_at)


@value
class Share:
    """What a caller's lane may spend of its batch: its POSTs end by `ends_at`."""

    ends_at: datetime
    answered: bool = False  # the caller's receiver answered 2xx earlier in this batch

    def seconds_left(self, now: datetime) -> float:
        return (self.ends_at - now).total_seconds()


def hop_seconds(now: datetime, due_at: datetime | None) -> int:
    """The delay to ask of SQS for a record due at `due_at`: all of it, or its first 15 minutes."""
    if due_at is None:
        return 0
    return max(0, min(MAX_QUEUE_DELAY_SECONDS, int((due_at - now).total_seconds() + 0.999)))


def give_up_after(base_seconds: int, max_attempts: int) -> timedelta:
    """How long an event may wait for its receiver in all: the whole backoff schedule. A record
    still put back unattempted after that (its caller's circuit never closed) is dead-lettered."""
    return timedelta(seconds=sum(retry_delay_seconds(n, base_seconds) for n in range(1, max_attempts)))


class CircuitBreakers:
    """Per caller, in this container: until when its receiver rests after failures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._resting: dict[CallerId, tuple[datetime, int]] = {}  # until, consecutive failures

    def resting_until(self, caller: CallerId, now: datetime) -> datetime | None:
        """When the caller's receiver may be tried again, if not now."""
        with self._lock:
            until = self._resting.get(caller, (now, 0))[0]
        return until if until > now else None

    def failing(self, caller: CallerId) -> bool:
        """Its receiver's last attempt here failed (resting, or about to be probed)."""
        with self._lock:
            return caller in self._resting

    def failed(self, caller: CallerId, now: datetime, base_seconds: int) -> None:
        """Rest as long as a record's backoff after as many failures (the backoff's base)."""
        with self._lock:
            failures = self._resting.get(caller, (now, 0))[1] + 1
            rest = min(retry_delay_seconds(failures, base_seconds), MAX_REST_SECONDS)
            self._resting[caller] = (now + timedelta(seconds=rest), failures)

    def answered(self, caller: CallerId) -> None:
        with self._lock:
            self._resting.pop(caller, None)
