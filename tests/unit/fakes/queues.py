"""The SES events queue, the escalation queue and the SMS delivery-status logs, in memory."""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from typing import Any

from sendledger.ports.ingestion import QueueMessage
from sendledger.ports.log_subscription import LogRecord
from sendledger.providers.sns.events import LogPage


class FakeEventQueue:
    """Received messages stay invisible until deleted or `release`d (their visibility timeout)."""

    def __init__(self) -> None:
        self._visible: deque[QueueMessage] = deque()
        self._received: dict[str, QueueMessage] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.deleted: list[str] = []
        self.elsewhere = 0  # received by another consumer, not yet deleted (push mode)

    def put(self, body: str | dict[str, Any]) -> QueueMessage:
        text = body if isinstance(body, str) else json.dumps(body)
        number = next(self._ids)
        message = QueueMessage(f"sqs-{number:04d}", f"handle-{number:04d}-1", text)
        with self._lock:
            self._visible.append(message)
        return message

    def receive(self, max_messages: int) -> list[QueueMessage]:
        with self._lock:
            batch = [self._visible.popleft() for _ in range(min(max(1, min(max_messages, 10)), len(self._visible)))]
            self._received.update((message.message_id, message) for message in batch)
        return batch

    def delete(self, messages: list[QueueMessage]) -> list[str]:
        with self._lock:
            for message in messages:
                self._received.pop(message.message_id, None)
                self.deleted.append(message.message_id)
        return []

    def in_flight(self) -> int:
        return self.elsewhere

    def release(self) -> None:
        """The visibility timeout passed: what was received and not deleted is visible again."""
        with self._lock:
            for message in self._received.values():
                count = message.receive_count + 1
                handle = f"{message.receipt_handle.rsplit('-', 1)[0]}-{count}"
                self._visible.append(QueueMessage(message.message_id, handle, message.body, count))
            self._received.clear()

    def depth(self) -> int:
        with self._lock:
            return len(self._visible) + len(self._received)


class FakeEscalationQueue:
    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], str]] = []  # (body, deduplication id)

    def send(self, body: dict[str, Any], deduplication_id: str) -> str:
        self.sent.append((json.loads(json.dumps(body, default=str)), deduplication_id))
        return f"esc-{len(self.sent):04d}"


class FakeLogReader:
    """FilterLogEvents over in-memory log groups: from `start_time_ms`, `limit` a page."""

    def __init__(self) -> None:
        self.groups: dict[str, list[LogRecord]] = {}
        self._ids = itertools.count(1)

    def write(self, group: str, message: str, timestamp_ms: int) -> LogRecord:
        record = LogRecord(str(next(self._ids)), timestamp_ms, message)
        self.groups.setdefault(group, []).append(record)
        return record

    def filter(self, log_group: str, start_time_ms: int, next_token: str | None, limit: int) -> LogPage:
        records = sorted(
            (r for r in self.groups.get(log_group, []) if r.timestamp_ms >= start_time_ms),
            key=lambda r: (r.timestamp_ms, int(r.log_event_id)),
        )
        start = int(next_token or 0)
        page = records[start : start + limit]
        more = start + limit < len(records)
        return LogPage(events=page, next_token=str(start + limit) if more else None)
