"""When a delivered Infrai message is read again, for a complaint that comes after the delivery.

Infrai pushes nothing, so a complaint is seen only by asking (lane.py). Mailbox providers report
complaints when a person marks the mail as spam, mostly within minutes to hours of its arrival,
rarely days later: the first read comes soon after the delivery, each later one waits as long as
the message has been delivered (the wait doubles), at most `max_interval_seconds`, and the last
read is at the horizon. Pure: the poller's lane, synthesis's SLO arithmetic and the cost
arithmetic all take the schedule from here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sendledger.domain.values import value


@value
class ComplaintSchedule:
    first_read_seconds: int  # after the delivery was seen
    max_interval_seconds: int  # the backoff's cap
    horizon_seconds: int  # after the delivery: no read later than this (0: none at all)

    def next_read(self, delivered_at: datetime, now: datetime) -> datetime | None:
        """When to read again after a read at `now`; None once the horizon is reached."""
        horizon = delivered_at + timedelta(seconds=self.horizon_seconds)
        if now >= horizon:
            return None
        return min(now + timedelta(seconds=self.wait_after(now - delivered_at)), horizon)

    def wait_after(self, delivered_for: timedelta) -> float:
        """The wait before the next read, once the message has been delivered this long."""
        return min(max(float(self.first_read_seconds), delivered_for.total_seconds()), self.max_interval_seconds)

    def read_offsets(self) -> list[float]:
        """Seconds after the delivery of every read, when each is made on time (the cost arithmetic)."""
        start = datetime.fromtimestamp(0, UTC)
        offsets: list[float] = []
        at = self.next_read(start, start)
        while at is not None:
            offsets.append((at - start).total_seconds())
            at = self.next_read(start, at)
        return offsets
