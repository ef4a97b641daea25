"""Suppression rules: which delivery events stop further sends to a recipient.

Each provider's parser reads its own failures into a `Verdict` (providers/<name>/events.py:
which bounces are permanent, which SMS failures mean the number cannot receive); the rules here
hold for every provider:

- a verdict `suppress` suppresses at once; `count_transient` counts a transient bounce, and
  `limit` of them within `window` (defaults 3 in 7 days, settings.transient_bounce_limit /
  _window_days) suppress;
- a complaint or an opt-out suppresses;
- a failure no parser classified counts as transient (and is logged as unknown).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from sendledger.domain.events import Action, DeliveryEvent, EventKind, Verdict, failure_reason
from sendledger.domain.values import value

__all__ = ["Action", "TransientPolicy", "Verdict", "verdict_for"]


def verdict_for(event: DeliveryEvent) -> Verdict:
    if event.verdict is not None:
        return event.verdict
    if event.kind is EventKind.UNSUBSCRIBE:
        return Verdict(Action.SUPPRESS, "unsubscribed")
    if event.kind is EventKind.COMPLAINT:
        feedback = event.evidence.get("complaint_feedback_type")
        return Verdict(Action.SUPPRESS, failure_reason(event.kind, feedback))
    if event.kind is EventKind.BOUNCE:
        return Verdict(Action.COUNT_TRANSIENT, failure_reason(event.kind, event.source), known=False)
    if event.kind is EventKind.SMS_FAILURE:
        return Verdict(Action.NONE, failure_reason(event.kind, "failure"), known=False)
    return Verdict(Action.NONE)


@value
class TransientPolicy:
    limit: int = 3
    window: timedelta = timedelta(days=7)

    def window_after(self, previous: Iterable[datetime], at: datetime) -> list[datetime]:
        """The bounce times worth keeping after one at `at`: those inside the window, newest last."""
        # Not a set: two bounces in the same millisecond are two bounces (events are deduped by id).
        moments = [*previous, at]
        cutoff = max(moments) - self.window
        kept = sorted(moment for moment in moments if moment > cutoff)
        return kept[-max(self.limit, 1) :]

    def reached(self, window: list[datetime]) -> bool:
        return self.limit > 0 and len(window) >= self.limit
