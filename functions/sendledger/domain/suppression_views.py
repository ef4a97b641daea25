"""What each audience sees of a recipient's suppression.

A recipient is suppressed for every caller's sends, so every caller may learn *that* it is,
since when, and of what class (bounce, complaint, admin, ...). The history is evidence with
other owners: an admin's ARN and free-text reason are the operator's, and a provider event id
(another caller's provider message id) is the caller's whose message it was. A caller sees the
entries its own messages caused; an admin sees everything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

ADMIN_SOURCE = "admin"
ADMIN_CLASS = "admin"
# What a caller's view keeps of an entry its own message caused
CLIENT_FIELDS = ("at", "type", "source", "event_id", "event_at", "reason", "message_id")


def reason_class(reason: str | None, history: Sequence[dict[str, Any]]) -> str | None:
    """The class of the current reason: `admin` when an admin's act set it, else the event's
    kind (`bounce: Permanent/General` is `bounce`); None when never suppressed."""
    if reason is None:
        return None
    acts = [entry for entry in history if not entry.get("unchanged")]
    if acts and acts[-1].get("source") == ADMIN_SOURCE:
        return ADMIN_CLASS
    return reason.split(":", 1)[0].strip() or None


def client_history(history: Sequence[dict[str, Any]], owns: Callable[[str], bool]) -> list[dict[str, Any]]:
    """The entries the caller's own messages caused (`owns(message_id)`), their evidence only."""
    return [
        {name: entry[name] for name in CLIENT_FIELDS if name in entry}
        for entry in history
        if entry.get("source") != ADMIN_SOURCE
        and isinstance(entry.get("message_id"), str)
        and owns(entry["message_id"])
    ]
