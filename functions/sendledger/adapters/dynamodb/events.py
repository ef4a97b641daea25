"""Applying one delivery event: one conditional write, or one transaction when it touches the
recipient too.

- The event's history entry goes on the send's receipt (receipts.py), beside the state it
  proves. Its attribute name is derived from the event's dedupe key, so the entry is also the
  dedupe: a redelivered event fails on it and changes nothing.
- The state update rides on the same write, conditioned on the states the event may move the
  receipt from.
- Suppressing, or counting a transient bounce, updates the recipient item in the same
  transaction.
- An event that matches no send is deduplicated by an `EVT#` item (TTL) instead. An SES event
  whose message id tag is not one of ours still gets a receipt (nothing tells a foreign id from
  ours without a read); no message ever reads it.

When a condition fails the old items come back; we write again without (or with an exact
version of) that part, so dedupe, history and suppression still land and out-of-order events
converge.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sendledger.adapters.dynamodb import history, receipts, recipients
from sendledger.adapters.dynamodb.expressions import Expression, Item, Update, encode_item
from sendledger.adapters.dynamodb.keys import (
    EVENT_SK,
    RECEIPT_SK,
    RECIPIENT_SK,
    receipt_pk,
    recipient_pk,
)
from sendledger.adapters.dynamodb.recipients import state_of
from sendledger.adapters.dynamodb.states import set_due
from sendledger.adapters.dynamodb.table import Cancelled, ConditionFailed, Table
from sendledger.domain import evidence
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import DueKind
from sendledger.domain.suppression_rules import TransientPolicy
from sendledger.domain.values import value
from sendledger.ports.ingestion import ApplyPlan, ApplyResult
from sendledger.ports.recipients import RecipientState

EVENT_RETENTION = timedelta(days=30)  # > SQS retention (14 d) and SMS status delay (72 h)
MAX_ATTEMPTS = 4


@value
class Attempt:
    """What the next write of one event includes (narrowed by what failed conditions showed)."""

    change_state: bool
    target_exists: bool = True
    prior_state: str | None = None
    suppress_reason: str | None = None
    recipient: RecipientState | None = None  # read back from a failed condition
    already_suppressed: bool = False
    relative_event_id: bool = True  # False once the receipt showed another provider message id


class DeliveryEvents:
    def __init__(self, table: Table) -> None:
        self.table = table

    def apply(self, event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> ApplyResult:
        has_target = plan.message_id is not None or plan.receipt_id is not None
        attempt = Attempt(change_state=has_target and plan.target is not None, target_exists=has_target)
        policy = TransientPolicy(plan.transient_limit, timedelta(seconds=plan.transient_window_seconds))
        for requests in range(1, MAX_ATTEMPTS + 1):
            suppress, window = self._recipient_part(event, plan, attempt, policy)
            target = self._target_update(event, plan, attempt, now, suppressing=suppress is not None)
            recipient = self._recipient_update(event, suppress, window, attempt, now)
            failed = self._write(event, plan, now, target, recipient)
            if failed is not None:
                if _is_duplicate(failed, event):
                    return ApplyResult(duplicate=True, requests=requests)
                if "target" in failed and not failed["target"] and plan.message_id is None:
                    # A receipt that does not exist (a send whose Publish answer we never got):
                    # nothing was written; the caller looks the send up.
                    return ApplyResult(duplicate=False, no_receipt=True, requests=requests)
                attempt = _narrowed(attempt, failed, event, plan)
                continue
            return ApplyResult(
                duplicate=False,
                message_updated=attempt.change_state,
                prior_state=attempt.prior_state,
                suppressed_now=suppress is not None,
                already_suppressed=attempt.already_suppressed,
                transient_count=len(window) if window is not None else None,
                requests=requests,
            )
        raise DependencyUnavailable("event apply kept conflicting; retry", retry_after_seconds=1)

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> tuple[str | None, bool]:
        """For a record whose receipt was missing: the receipt (an outcome write may have landed
        since), else the destination's last send if it is inside the window.

        One BatchGetItem for all three (a delivery-status record for the same destination
        inside the send window proves the outcome of a send whose call timed out).
        """
        keys = [(receipt_pk(provider_message_id), RECEIPT_SK)]
        if recipient_key:
            keys.append((recipient_pk(recipient_key), RECIPIENT_SK))
        if dedupe_key:
            keys.append((dedupe_key, EVENT_SK))
        found = {str(item["sk"]["S"]): item for item in self.table.batch_get(keys)}
        applied = EVENT_SK in found
        if RECEIPT_SK in found:
            return str(found[RECEIPT_SK]["message_id"]["S"]), applied
        recipient = state_of(found.get(RECIPIENT_SK))
        sent_at = recipient.last_send_at
        if sent_at is not None and sent_at <= occurred_at <= sent_at + timedelta(seconds=window_seconds):
            return recipient.last_message_id, applied
        return None, applied

    # --- what to write -------------------------------------------------------------------------
    def _recipient_part(
        self, event: DeliveryEvent, plan: ApplyPlan, attempt: Attempt, policy: TransientPolicy
    ) -> tuple[str | None, list[datetime] | None]:
        """(suppression reason if this write suppresses, the transient window if it counts one)."""
        if event.recipient_key is None or attempt.already_suppressed:
            return None, None
        if plan.suppress_reason is not None:
            return plan.suppress_reason, None
        if plan.count_transient_reason is None:
            return None, None
        known = attempt.recipient.transient_times if attempt.recipient else []
        window = policy.window_after(known, event.occurred_at)
        return (plan.count_transient_reason if policy.reached(window) else None), window

    def _target_update(
        self, event: DeliveryEvent, plan: ApplyPlan, attempt: Attempt, now: datetime, suppressing: bool
    ) -> Update | None:
        if not attempt.target_exists:
            return None
        update, receipt = Update(), _target_key(plan)
        within = plan.receipt_id if receipt.written_by_outcome else None  # an SMS receipt's key holds it
        if event.provider_message_id and not receipt.written_by_outcome:
            update.set_if_absent("provider_message_id", event.provider_message_id)
            if attempt.relative_event_id:
                # The entry stores its event id without the provider id only while the receipt
                # holds that same id (a resend's events may land on a receipt holding another).
                within = event.provider_message_id
                pmid = update.name("provider_message_id")
                update.when(f"attribute_not_exists({pmid}) OR {pmid} = {update.value(within)}")
        if attempt.change_state and plan.target is not None:
            update.set("state", plan.target.value).set("updated_at", iso(now))
            if plan.target in evidence.FAILED_FOR_GOOD:
                # Escalation may act before the deadline once a message failed for good: the
                # poller checks this message (and drops the marker when it has no escalation),
                # unless the event says the message has none.
                update.set("reason", evidence.reason_of(event))
                set_due(update, _message_id_for_due(plan), None if event.escalates is False else (DueKind.OUTCOME, now))
            else:
                # Acceptance or delivery proven: a reason such as the send's ReadTimeoutError no
                # longer explains the state (it stays in the history as evidence).
                set_due(update, _message_id_for_due(plan), None).remove("reason")
            allowed = update.one_of("state", [state.value for state in plan.allowed_from])
            if receipt.written_by_outcome:
                update.when(allowed)
            else:
                update.when(f"attribute_not_exists({update.name('state')}) OR {allowed}")
        entry = evidence.event_entry(event, plan.target, attempt.change_state, attempt.prior_state, now, suppressing)
        history.append(update, entry, derived_from=event.dedupe_key, within=within)
        if receipt.written_by_outcome:
            update.when(f"attribute_exists({update.name('pk')})")
        return update

    def _recipient_update(
        self,
        event: DeliveryEvent,
        suppress: str | None,
        window: list[datetime] | None,
        attempt: Attempt,
        now: datetime,
    ) -> Update | None:
        if event.recipient_key is None or (suppress is None and window is None):
            return None
        update = Update()
        if window is not None:
            revision = attempt.recipient.transient_revision if attempt.recipient else None
            recipients.transient_window(update, window, revision, now)
        if suppress is not None:
            recipients.suppress(update, suppress, event.dedupe_key, now)
            history.append(update, evidence.suppression_entry(event, suppress, now))
        return update

    # --- writing ---------------------------------------------------------------------------------
    def _write(
        self, event: DeliveryEvent, plan: ApplyPlan, now: datetime, target: Update | None, recipient: Update | None
    ) -> dict[str, Item | None] | None:
        """None when written; else the labels whose condition failed, with their old items
        (empty: a transient conflict, nothing written)."""
        parts: list[tuple[str, str, str, Update | Item]] = []
        if target is not None:
            receipt = _target_key(plan)
            parts.append(("target", receipt.pk, receipt.sk, target))
        else:
            parts.append(("dedupe", event.dedupe_key, EVENT_SK, _dedupe_item(event, plan, now)))
        if recipient is not None:
            assert event.recipient_key is not None
            parts.append(("recipient", recipient_pk(event.recipient_key), RECIPIENT_SK, recipient))
        if len(parts) == 1:
            label, pk, sk, part = parts[0]
            try:
                self._single(pk, sk, part)
            except ConditionFailed as failed:
                return {label: failed.old}
            return None
        tx = self.table.transaction()
        for label, pk, sk, part in parts:
            if isinstance(part, Update):
                tx.update(label, pk, sk, part)
            else:
                e = Expression()
                tx.put(label, part, f"attribute_not_exists({e.name('pk')})", e)
        try:
            tx.commit()
        except Cancelled as cancelled:
            return {} if cancelled.retryable or not cancelled.failed else cancelled.failed
        return None

    def _single(self, pk: str, sk: str, part: Update | Item) -> None:
        """One item: a conditional write, half a transaction's price."""
        if isinstance(part, Update):
            self.table.update(pk, sk, part)
        else:
            e = Expression()
            self.table.put(part, f"attribute_not_exists({e.name('pk')})", e)


def _narrowed(attempt: Attempt, failed: dict[str, Item | None], event: DeliveryEvent, plan: ApplyPlan) -> Attempt:
    if "target" in failed:
        old = failed["target"] or {}
        held = old.get("provider_message_id", {}).get("S")
        if held is not None and held != event.provider_message_id:
            attempt = replace(attempt, relative_event_id=False)
        state = old.get("state", {}).get("S")
        if not old or (state is not None and state not in {allowed.value for allowed in plan.allowed_from}):
            # The receipt is past what the event proves: record the event, keep the state.
            attempt = replace(attempt, change_state=False, prior_state=state)
    if "recipient" in failed:
        state = recipients.state_of(failed["recipient"])
        attempt = replace(attempt, recipient=state, already_suppressed=state.suppression.suppressed)
    return attempt


def _is_duplicate(failed: dict[str, Item | None], event: DeliveryEvent) -> bool:
    if "dedupe" in failed:
        return True
    target = failed.get("target")
    return bool(target) and history.event_attribute(event.dedupe_key) in (target or {})


def _target_key(plan: ApplyPlan) -> receipts.ReceiptKey:
    """Where the event's state and history land: the send's receipt."""
    if plan.message_id:
        return receipts.of_message(plan.message_id)
    assert plan.receipt_id is not None
    return receipts.of_sms(plan.receipt_id)


def _message_id_for_due(plan: ApplyPlan) -> str:
    return plan.message_id or plan.receipt_id or ""


def _dedupe_item(event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> Item:
    return encode_item(
        {
            "pk": event.dedupe_key,
            "sk": EVENT_SK,
            "source": event.source,
            "kind": event.kind.value,
            "occurred_at": iso(event.occurred_at),
            "applied_at": iso(now),
            "recipient": event.recipient_fingerprint,  # fingerprint, never the address
            "expires_at": int((now + EVENT_RETENTION).timestamp()),
        }
    )
