"""Poller state: each source's watermark and the SMS log cursor (written by the poller, read by sends too)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class PollerStateStore(Protocol):
    """Source watermarks and the SMS log cursor (written by the poller only)."""

    def watermark(self, source: str) -> datetime | None: ...

    def recent_watermark(self, source: str, now: datetime, *, read: bool = True) -> datetime | None:
        """The watermark as read recently (cached per container; only ever behind the truth);
        `read=False`: the cached value only, None when none is recent."""

    def known_watermark(self, source: str) -> datetime | None:
        """The last watermark this container read, however old (None: never read; no read is
        made). Only a condition that an older watermark makes stricter may use it
        (domain/watermarks.py)."""

    def set_watermark(self, source: str, at: datetime) -> None: ...

    def cursor(self, source: str) -> str | None: ...

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None: ...
