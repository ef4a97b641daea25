"""The message lifecycle as the product contract draws it, written out by hand.

Independent of `sendledger.domain.messages` on purpose: the invariant checks and the oracle
tests compare the product against this table, so a forbidden edge added to the product's own
table is caught instead of copied.

    received ─► suppressed | cancelled | pending (stale eligibility deferred) | sending
    sending  ─► accepted | unknown | pending | rejected
    unknown  ─► accepted (evidence found) | retry (absence proven) | unresolved
    retry | pending ─► sending | suppressed | cancelled
    accepted ─► delivered | bounced | complained | failed
Delivery evidence proves acceptance, so an outcome may also land on sending, unknown or
unresolved. Outcomes only move forward: delivered → bounced | failed | complained,
bounced | failed → complained. Anything but delivered may be escalated; escalated is final.
"""

from __future__ import annotations

from functools import cache

STATES = (
    "received",
    "suppressed",
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
    "cancelled",
)
OUTCOMES = ("delivered", "bounced", "complained", "failed")

_DRAWN = {
    "received": {"suppressed", "cancelled", "pending", "sending"},
    "sending": {"accepted", "unknown", "pending", "rejected"},
    "unknown": {"accepted", "retry", "unresolved"},
    "retry": {"sending", "suppressed", "cancelled"},
    "pending": {"sending", "suppressed", "cancelled"},
    "accepted": set(OUTCOMES),
    "delivered": {"bounced", "failed", "complained"},
    "bounced": {"complained"},
    "failed": {"complained"},
}
_EVIDENCE_LANDS_ON = ("sending", "unknown", "unresolved")


def _edges() -> dict[str, frozenset[str]]:
    edges = {state: set(_DRAWN.get(state, set())) for state in STATES}
    for state in _EVIDENCE_LANDS_ON:
        edges[state] |= set(OUTCOMES)
    for state in STATES:
        if state not in ("delivered", "escalated"):
            edges[state].add("escalated")
    return {state: frozenset(targets) for state, targets in edges.items()}


ALLOWED: dict[str, frozenset[str]] = _edges()


def allowed(current: str, target: str) -> bool:
    """One committed transition the contract permits."""
    return target in ALLOWED.get(current, frozenset())


@cache
def reachable(current: str) -> frozenset[str]:
    """States a message may be seen in later, after any number of permitted transitions."""
    seen: set[str] = set()
    frontier = [current]
    while frontier:
        for target in ALLOWED.get(frontier.pop(), frozenset()):
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return frozenset(seen)
