"""EventBridge, locally: a thread that runs one poll cycle every interval."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from local.constants import ACCOUNT_ID, POLLER_SCHEDULE_RULE, REGION

LOG = logging.getLogger("sendledger.local.scheduler")


def scheduled_event(
    *,
    now: datetime,
    region: str = REGION,
    account_id: str = ACCOUNT_ID,
    rule_name: str = POLLER_SCHEDULE_RULE,
) -> dict[str, Any]:
    """The event an EventBridge schedule rule delivers to its Lambda target."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account_id,
        "time": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:{account_id}:rule/{rule_name}"],
        "detail": {},
    }


class Scheduler:
    """Calls ``tick`` every ``interval`` seconds until stopped; a failing tick is logged."""

    def __init__(
        self,
        tick: Callable[[], Any],
        interval: float,
        *,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self.tick = tick
        self.interval = interval
        self._stop = threading.Event()
        # wait(seconds) -> True when stopped; injectable so tests never sleep.
        self._wait = wait or self._stop.wait
        self._thread: threading.Thread | None = None
        self.ticks = 0
        self.failures = 0

    def run(self) -> None:
        while not self._wait(self.interval) and not self._stop.is_set():
            self.run_once()

    def run_once(self) -> None:
        self.ticks += 1
        try:
            self.tick()
        except Exception:
            self.failures += 1
            LOG.exception("scheduled poll failed; the next tick runs as planned")

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="sendledger-scheduler", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the thread is still alive (stop() returns after ``timeout`` even if not)."""
        return self._thread is not None and self._thread.is_alive()

    def request_stop(self) -> None:
        """No further tick starts; one in flight runs on (``stop`` waits for it)."""
        self._stop.set()

    def stop(self, *, timeout: float) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
