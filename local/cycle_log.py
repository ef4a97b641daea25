"""What `make run` prints about a poll cycle: one line of counts, and one line per message whose
`unknown` or retry the cycle settled (a developer watching `alice+timeout-lost` sees it resolve)."""

from __future__ import annotations

from typing import Any

# The outcomes worth a line of their own ("unknown_waiting" would repeat every cycle; a step that
# lost a race to another writer says nothing about the message).
RESOLUTIONS = {
    "lease_expired": "its sender stopped mid-send: unknown now",
    "unknown_already_resolved": "unknown resolved by a provider event, not resent",
    "unknown_found_by_lookup": "unknown resolved by the provider's lookup: accepted, not resent",
    "unknown_found_by_search": "unknown resolved by the provider's event search: accepted, not resent",
    "absence_proven": "unknown: no event by the watermark plus UNKNOWN_GRACE_SECONDS, sending again",
    "unresolved": "unknown for longer than UNKNOWN_MAX_AGE_SECONDS: unresolved",
    "reset_sent": "reset mail sent, with the reset's first token",
    "reset_resent": "reset mail sent again, with a newly minted token (the last one was proven never accepted)",
    "reset_mail_suppressed": "reset mail not sent: the recipient is suppressed now",
    "reset_mail_cancelled": "reset mail withdrawn: its reset is no longer active",
    "resend_suppressed": "not sent again: the recipient is suppressed now",
}
# unknown_already_resolved with the moment it left unknown (a cycle or more before this line)
SETTLED_EARLIER = "unknown resolved at {since} by a provider event ({state} now), not resent"
RESENT = "resent_"  # resent_<the state the resend ended in>


def cycle_line(summary: dict[str, Any], seconds: float) -> str:
    """``poll: 4 ses_events_published, 4 applied, 1 absence_proven (85 ms)``; "" for a cycle that did nothing."""
    poller = summary.get("poller")
    counts: dict[str, Any] = {**summary.get("flush", {}), **(poller if isinstance(poller, dict) else {})}
    counts.pop("sms_records_awaiting_delivery", None)  # a level, not work done
    resolved = counts.pop("resolved", None)
    if isinstance(resolved, dict):
        counts.update({what: n for what, n in resolved.items() if what in RESOLUTIONS or what.startswith(RESENT)})
    done = [f"{value} {name}" for name, value in counts.items() if type(value) is int and value]
    return f"poll: {', '.join(done)} ({seconds * 1000:.0f} ms)" if done else ""


def resolution_lines(summary: dict[str, Any]) -> list[str]:
    """``poll: msg_01… resent: accepted``, one per message the cycle settled, in the order it did."""
    poller = summary.get("poller")
    lines = []
    for entry in (poller.get("resolved_messages") or []) if isinstance(poller, dict) else []:
        what, message_id = str(entry.get("outcome")), entry.get("message_id")
        if what.startswith(RESENT):
            lines.append(f"poll: {message_id} resent: {what.removeprefix(RESENT)}")
        elif entry.get("since"):  # an earlier event settled it; its marker fell due only now
            lines.append(f"poll: {message_id} {SETTLED_EARLIER.format(**entry)}")
        elif what in RESOLUTIONS:
            lines.append(f"poll: {message_id} {RESOLUTIONS[what]}")
    return lines
