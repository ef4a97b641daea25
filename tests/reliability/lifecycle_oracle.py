"""The message lifecycle as the product contract draws it, written out by hand as literal pairs.

Independent of `sendledger.domain.messages` on purpose: the oracle tests and the ledger watch
compare the product against this table, so a forbidden edge added to the product's own table is
caught instead of copied.
"""

from __future__ import annotations

from functools import cache

LIFECYCLE_STATES = {
    "received",
    "suppressed",
    "cancelled",
    "sending",
    "accepted",
    "delivered",
    "bounced",
    "complained",
    "failed",
    "unknown",
    "retry",
    "unresolved",
    "pending",
    "rejected",
    "escalated",
}

LIFECYCLE_EDGES = {
    # received ─► suppressed | cancelled | sending
    ("received", "suppressed"),
    ("received", "cancelled"),
    ("received", "sending"),
    # STALE_ELIGIBILITY_POLICY=defer answers `pending` before any send
    ("received", "pending"),
    # sending ─► accepted | unknown | pending | rejected
    ("sending", "accepted"),
    ("sending", "unknown"),
    ("sending", "pending"),
    ("sending", "rejected"),
    # unknown ─► accepted (evidence found) | retry (absence proven) | unresolved
    ("unknown", "accepted"),
    ("unknown", "retry"),
    ("unknown", "unresolved"),
    # retry | pending ─► sending | suppressed | cancelled
    ("retry", "sending"),
    ("retry", "suppressed"),
    ("retry", "cancelled"),
    ("pending", "sending"),
    ("pending", "suppressed"),
    ("pending", "cancelled"),
    # accepted ─► delivered | bounced | complained | failed
    ("accepted", "delivered"),
    ("accepted", "bounced"),
    ("accepted", "complained"),
    ("accepted", "failed"),
    # Delivery evidence proves acceptance: an outcome may land while the send still looks in
    # flight, unknown or unresolved (a timed-out call the provider accepted)
    ("sending", "delivered"),
    ("sending", "bounced"),
    ("sending", "complained"),
    ("sending", "failed"),
    ("unknown", "delivered"),
    ("unknown", "bounced"),
    ("unknown", "complained"),
    ("unknown", "failed"),
    ("unresolved", "delivered"),
    ("unresolved", "bounced"),
    ("unresolved", "complained"),
    ("unresolved", "failed"),
    # Outcomes never regress (a late delivered does not undo bounced) and out-of-order events
    # converge: so a bounce or failure after delivered wins, and a complaint overrides all
    ("delivered", "bounced"),
    ("delivered", "failed"),
    ("delivered", "complained"),
    ("bounced", "complained"),
    ("failed", "complained"),
    # any non-delivered state at the escalation deadline, or failed/bounced/suppressed/rejected
    # earlier ─► escalated (recorded once: escalated itself is final)
    ("received", "escalated"),
    ("suppressed", "escalated"),
    ("cancelled", "escalated"),
    ("sending", "escalated"),
    ("accepted", "escalated"),
    ("bounced", "escalated"),
    ("complained", "escalated"),
    ("failed", "escalated"),
    ("unknown", "escalated"),
    ("retry", "escalated"),
    ("unresolved", "escalated"),
    ("pending", "escalated"),
    ("rejected", "escalated"),
}


def allowed(current: str, target: str) -> bool:
    """One committed transition the contract permits."""
    return (current, target) in LIFECYCLE_EDGES


@cache
def reachable(current: str) -> frozenset[str]:
    """States a message may be seen in later, after any number of permitted transitions."""
    seen: set[str] = set()
    frontier = [current]
    while frontier:
        state = frontier.pop()
        for source, target in LIFECYCLE_EDGES:
            if source == state and target not in seen:
                seen.add(target)
                frontier.append(target)
    return frozenset(seen)
