"""What one delivery event writes, decided here; the store only translates the plan into a request.

A plan holds the state move (target, the states it may move from, the reason and escalation
marker of a failure for good), the event's history entry, the suppression change and the
transient-bounce window. The store writes it optimistically (one conditional request: it
assumes the receipt may take the move and the recipient has no earlier transient bounce), and
when a condition fails it hands back what it learned; `narrowed` decides again from that, by the
same rules, and the store writes the narrowed plan. The in-memory fake applies the same plans.
"""

from __future__ import annotations

from dataclasses import field, replace
from datetime import datetime

from sendledger.domain import evidence
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import HistoryEntry, MessageState
from sendledger.domain.outcomes import allowed_from, target_state
from sendledger.domain.suppression_rules import Action, TransientPolicy, Verdict
from sendledger.domain.values import value


@value
class StateMove:
    target: MessageState
    allowed_from: frozenset[MessageState]
    reason: str | None = None  # set when the event fails the message for good; cleared otherwise
    # Failed for good: the poller may escalate before the deadline (unless the event says the
    # message has no escalation, then no marker is left).
    outcome_marker: bool = False

    @property
    def failed_for_good(self) -> bool:
        return self.target in evidence.FAILED_FOR_GOOD


@value
class TransientWindow:
    """The recipient's transient bounces within the window after this one, newest last."""

    times: list[datetime]
    known_revision: int | None  # the window's revision read; None: optimistic (no earlier bounce)


@value
class Suppression:
    reason: str
    entry: HistoryEntry  # on the recipient item


@value
class RecipientPart:
    suppression: Suppression | None = None
    transient: TransientWindow | None = None
    already_suppressed: bool = False


@value
class RecipientSeen:
    """The recipient item as a failed condition handed it back."""

    suppressed: bool
    transient_times: list[datetime] = field(default_factory=list)
    transient_revision: int = 0


@value
class EventPlan:
    event: DeliveryEvent
    at: datetime  # when it is applied: the entries' time, the items' updated_at
    message_id: str | None  # None: no message matched (suppression and dedupe still land)
    # An SMS receipt under the provider's message id: where the event lands when set (with a
    # message id too, the send is known and the event may create the receipt naming it).
    receipt_id: str | None
    proves: StateMove | None  # the move the event proves
    move: StateMove | None  # what is written: None for history only, or a receipt already past it
    entry: HistoryEntry  # the event's entry on the receipt; its key is derived from the dedupe key
    verdict: Verdict
    policy: TransientPolicy
    suppression: Suppression | None = None
    transient: TransientWindow | None = None
    prior_state: str | None = None  # the receipt's state that refused the move
    already_suppressed: bool = False  # the recipient was found suppressed: nothing to change there

    @property
    def has_target(self) -> bool:
        return self.message_id is not None or self.receipt_id is not None

    @property
    def recipient_entry(self) -> HistoryEntry | None:
        """The recipient's entry when the event suppresses it, naming the message whose event it
        was: a caller's view of the recipient shows the entries its own messages caused."""
        if self.suppression is None:
            return None
        entry = self.suppression.entry
        if self.message_id is None:
            return entry
        return replace(entry, evidence={**entry.evidence, "message_id": self.message_id})

    def narrowed(
        self, *, move_refused_by: str | None = None, refused: bool = False, recipient: RecipientSeen | None = None
    ) -> EventPlan:
        """Decided again from what the store's failed conditions showed: the receipt's state that
        refused the move (`refused`), the recipient item as it is."""
        plan = self
        if refused:
            plan = replace(plan, move=None, prior_state=move_refused_by)
        if recipient is not None:
            part = _recipient_part(plan.event, plan.verdict, plan.policy, recipient, now=plan.at)
            plan = replace(
                plan, suppression=part.suppression, transient=part.transient, already_suppressed=part.already_suppressed
            )
        return _with_entry(plan)


def plan_event(
    event: DeliveryEvent,
    verdict: Verdict,
    policy: TransientPolicy,
    now: datetime,
    *,
    message_id: str | None,
    receipt_id: str | None = None,
) -> EventPlan:
    """The optimistic plan: the receipt may take the move, the recipient has no earlier transient bounce."""
    target = target_state(event) if message_id is not None or receipt_id is not None else None
    move = None
    if target is not None:
        failed = target in evidence.FAILED_FOR_GOOD
        move = StateMove(
            target=target,
            allowed_from=allowed_from(target),
            reason=evidence.reason_of(event) if failed else None,
            outcome_marker=failed and event.escalates is not False,
        )
    unseen = RecipientSeen(suppressed=False)
    part = _recipient_part(event, verdict, policy, unseen, now=now, optimistic=True)
    entry = evidence.event_entry(event, target, move is not None, None, now, part.suppression is not None)
    return EventPlan(
        event,
        now,
        message_id,
        receipt_id,
        proves=move,
        move=move,
        entry=entry,
        verdict=verdict,
        policy=policy,
        suppression=part.suppression,
        transient=part.transient,
        already_suppressed=part.already_suppressed,
    )


def _recipient_part(
    event: DeliveryEvent,
    verdict: Verdict,
    policy: TransientPolicy,
    seen: RecipientSeen,
    *,
    now: datetime,
    optimistic: bool = False,
) -> RecipientPart:
    """The suppression change and transient window the event makes, the recipient being as `seen`."""
    none = RecipientPart(already_suppressed=seen.suppressed)
    if event.recipient_key is None or seen.suppressed or verdict.reason is None:
        return none
    if verdict.action is Action.SUPPRESS:
        return replace(none, suppression=_suppression(event, verdict.reason, now))
    if verdict.action is not Action.COUNT_TRANSIENT:
        return none
    times = policy.window_after(seen.transient_times, event.occurred_at)
    window = TransientWindow(times, None if optimistic else seen.transient_revision)
    reached = _suppression(event, verdict.reason, now) if policy.reached(times) else None
    return replace(none, suppression=reached, transient=window)


def _suppression(event: DeliveryEvent, reason: str, now: datetime) -> Suppression:
    return Suppression(reason, evidence.suppression_entry(event, reason, now))


def _with_entry(plan: EventPlan) -> EventPlan:
    """The event's entry as this plan writes it (the move applied or not, suppressing or not)."""
    target = plan.proves.target if plan.proves else None
    applied, suppressing = plan.move is not None, plan.suppression is not None
    entry = evidence.event_entry(plan.event, target, applied, plan.prior_state, plan.at, suppressing)
    return replace(plan, entry=entry)
