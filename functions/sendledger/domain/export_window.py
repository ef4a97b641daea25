"""The evidence export's window and its page cursor.

A cursor names the last message a page returned (its creation time and id), so the next page
starts right after it. It is opaque to callers (base64url JSON) and validated on the way back
in: it must decode, name a message id, and lie inside the request's window. The caller's own
identity, never the cursor, picks the index partition read, so a forged cursor can at most
skip through the caller's own messages.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, datetime, timedelta

from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.errors import InvalidRequest
from sendledger.domain.values import value

MAX_WINDOW = timedelta(days=31)
MAX_LIMIT = 1000
DEFAULT_LIMIT = 500
_MESSAGE_ID = re.compile(r"^msg_[0-9A-HJKMNP-TV-Z]{26}$")


@value
class Position:
    """A message's place in its caller's creation order (the evidence index's entry)."""

    created_at: datetime
    message_id: str


@value
class Window:
    since: datetime
    until: datetime  # exclusive

    def days(self, start: datetime | None = None) -> list[datetime]:
        """Midnights (UTC) of every day the window touches from `start` on."""
        first = (start or self.since).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        last = self.until - timedelta(milliseconds=1)
        found = []
        while first <= last:
            found.append(first)
            first += timedelta(days=1)
        return found

    def contains(self, moment: datetime) -> bool:
        return self.since <= moment < self.until


def _field_error(field: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"{field}: {message}", [{"field": field, "message": message}])


def parse_instant(text: str, field: str) -> datetime:
    """RFC 3339 with a time zone ('Z' or an offset); kept to the millisecond the ledger stores."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text.strip()):
        raise _field_error(field, "an RFC 3339 date-time with a time zone, e.g. 2026-01-31T00:00:00Z")
    try:
        moment = datetime.fromisoformat(text.strip().upper().replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        raise _field_error(field, "not a valid date-time") from None
    moment = moment.astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def window(since: str, until: str) -> Window:
    start, end = parse_instant(since, "since"), parse_instant(until, "until")
    if end <= start:
        raise _field_error("until", "must be after since")
    if end - start > MAX_WINDOW:
        raise _field_error("until", "the window is at most 31 days")
    return Window(start, end)


def check_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise _field_error("limit", f"1-{MAX_LIMIT}")
    return limit


def encode_cursor(position: Position) -> str:
    raw = json.dumps({"t": iso(position.created_at), "m": position.message_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str, within: Window) -> Position:
    """The position a cursor names; a 400 for anything this service did not hand out for this window."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw)
        position = Position(parse_iso(str(values["t"])), str(values["m"]))
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
        raise _field_error("cursor", "not a cursor this export handed out") from None
    if not _MESSAGE_ID.match(position.message_id) or not within.contains(position.created_at):
        raise _field_error("cursor", "not a cursor of this window")
    return position
