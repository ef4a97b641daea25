"""What a due-work step tells the poll cycle's report (usecases/poll.py CycleReport)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sendledger.domain.messages import MessageState


@dataclass(frozen=True)
class Since:
    """A message an earlier event resolved: its state now, and when it left `unknown` (its
    marker falls due later, and the cycle says when the resolution happened, not that it did now)."""

    state: MessageState
    at: datetime


class Counter(Protocol):
    def bump(self, what: str, message_id: str | None = None, since: Since | None = None) -> None: ...
