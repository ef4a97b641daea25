"""The complaint scenario of each `sendledger conformance` leg, and the leg's measured times.

The design note's story (send at 10:00, complaint at 10:01) through one provider: an email to the
SES mailbox simulator's complaint address (a `+label` per run: a suppression is global, and an
earlier run's must not decide this one), which every provider delivers and then reports as a
complaint, by its own path. The row `complaint_after_delivery_suppresses` passes when the message
ends `complained` and the recipient is suppressed by that complaint.

The times are read from the record, on the stack's clock (the `at` of each history entry, the
suppression's `since`), except the complaint's own time, which is the provider's (`event_at`;
locally the simulator's, the same clock): request -> accepted, accepted -> the first final event
(delivered, or a bounce), complaint -> recipient suppressed. Observing is HTTP (`observe`);
judging and measuring are pure (`judge`, `measured`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sendledger_client.client import SendledgerClient, View

CONDITION = "complaint_after_delivery_suppresses"
TIMES = ("request_to_accepted_seconds", "accepted_to_final_seconds", "complaint_to_suppressed_seconds")
FINAL_EVENTS = frozenset({"event:Delivery", "event:Bounce", "event:Complaint", "event:Reject"})


class Plan(Protocol):
    run_id: str
    deadline_seconds: float
    local: bool
    wait_seconds: float
    sleep: Callable[[float], None]
    clock: Callable[[], float]


@dataclass
class Seen:
    """What the scenario saw: the message, its recipient's suppression, and whether it settled."""

    message: View
    suppression: View
    settled: bool  # False: the deadline passed before the recipient was suppressed


def address(provider: str, run_id: str) -> str:
    return f"complaint+conformance-{provider}-{run_id}@simulator.amazonses.com"


def observe(client: SendledgerClient, provider: str, plan: Plan) -> Seen:
    """Send to the complaint address through `provider`; look until the recipient is suppressed
    (locally polling at once, deployed on the poller's schedule) or the deadline passes."""
    to = address(provider, plan.run_id)
    started = plan.clock()
    key, params = f"conformance-complaint-{provider}-{plan.run_id}", {"summary": "conformance: a complaint"}
    sent = client.send("email", to, "alert", params=params, idempotency_key=key, provider=provider)
    message_id = str(sent["message_id"])
    while True:
        if plan.local:
            client.poll()
        suppression, message = client.suppression(to), client.message(message_id)
        if suppression.get("suppressed") and message.get("state") == "complained":
            return Seen(message, suppression, settled=True)
        if plan.clock() - started >= plan.deadline_seconds:
            return Seen(message, suppression, settled=False)
        plan.sleep(plan.wait_seconds)


def judge(seen: Seen) -> tuple[bool, str]:
    """(passed, detail): the message complained and its complaint suppressed the recipient."""
    state, suppressed = seen.message.get("state"), bool(seen.suppression.get("suppressed"))
    history = list(seen.message.get("history") or [])
    complained = [entry for entry in history if entry.get("type") == "event:Complaint"]
    delivered = any(entry.get("type") == "event:Delivery" for entry in history)
    # A caller's view names the reason's class (the admin view has the provider's words).
    reason = str(seen.suppression.get("reason_class") or seen.suppression.get("reason") or "")
    passed = state == "complained" and suppressed and bool(complained) and "complaint" in reason.lower()
    detail = (
        f"{'delivered, then ' if delivered else ''}{state}; recipient "
        f"{'suppressed (' + reason + ')' if suppressed else 'sendable'}" + ("" if seen.settled else "; deadline passed")
    )
    return passed, detail


def measured(seen: Seen) -> dict[str, float | None]:
    """The leg's times in seconds (None: the record does not show that step)."""
    history = list(seen.message.get("history") or [])
    requested = _at(_first(history, lambda e: e.get("type") == "intent"), "at")
    accepted = _at(_first(history, _accepted), "at")
    final = _at(_first(history, lambda e: e.get("type") in FINAL_EVENTS and e.get("state")), "at")
    complaint = _at(_first(history, lambda e: e.get("type") == "event:Complaint"), "event_at")
    suppressed = _at(seen.suppression, "since") if seen.suppression.get("suppressed") else None
    return dict(zip(TIMES, (_between(requested, accepted), _between(accepted, final),
                            _between(complaint, suppressed)), strict=True))  # fmt: skip


def _accepted(entry: dict[str, Any]) -> bool:
    if entry.get("type") == "provider_outcome":
        return entry.get("provider_result") == "accepted"
    return entry.get("type") == "provider_lookup" and entry.get("lookup") == "found"


def _first(entries: list[dict[str, Any]], wanted: Callable[[dict[str, Any]], Any]) -> dict[str, Any] | None:
    return next((entry for entry in entries if wanted(entry)), None)


def _at(entry: dict[str, Any] | None, name: str) -> datetime | None:
    raw = entry.get(name) if entry else None
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None
    except ValueError:
        return None


def _between(start: datetime | None, end: datetime | None) -> float | None:
    return round((end - start).total_seconds(), 3) if start is not None and end is not None else None


def describe(times: dict[str, float | None]) -> list[str]:
    """The times as the table's lines, one per step."""
    labels = ("request -> accepted", "accepted -> final event", "complaint -> suppressed")
    return [f"{label} {_seconds(times.get(name))}" for label, name in zip(labels, TIMES, strict=True)]


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f} s"
