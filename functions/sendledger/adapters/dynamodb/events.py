"""Writing one delivery event's plan (domain/event_plan.py): one conditional write, or one
transaction when it touches the recipient too. What to write is the plan's; how is this module's.

- The event's history entry goes on the send's receipt (receipts.py), beside the state it
  proves. Its attribute name is derived from the event's dedupe key, so the entry is also the
  dedupe: a redelivered event fails on it and changes nothing.
- The state move rides on the same write, conditioned on the states the plan may move from.
- A suppression, or a transient-bounce window, updates the recipient item in the same
  transaction (conditioned on it not being suppressed, and on the window's revision).
- An event that matches no send is deduplicated by an `EVT#` item (TTL) instead. An event
  whose message id is not one of ours still gets a receipt (nothing tells a foreign id from
  ours without a read); no message ever reads it.

When a condition fails the old items come back; the plan is narrowed by what they show (the
receipt's state, the recipient as it is) and written again, so dedupe, history and suppression
still land and out-of-order events converge.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sendledger.adapters.dynamodb import history, receipts, recipients
from sendledger.adapters.dynamodb.expressions import Expression, Item, Update, encode_item
from sendledger.adapters.dynamodb.keys import (
    EVENT_SK,
    MESSAGE_PK_PREFIX,
    MESSAGE_SK,
    RECEIPT_SK,
    RECIPIENT_SK,
    message_pk,
    receipt_pk,
    recipient_pk,
)
from sendledger.adapters.dynamodb.recipients import state_of
from sendledger.adapters.dynamodb.states import set_due
from sendledger.adapters.dynamodb.table import Cancelled, ConditionFailed, Table
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.event_plan import EventPlan, RecipientSeen
from sendledger.domain.messages import DueKind
from sendledger.ports.ingestion import ApplyResult, SmsMatch, SmsSendFound

EVENT_RETENTION = timedelta(days=30)  # > SQS retention (14 d) and SMS status delay (72 h)
MAX_ATTEMPTS = 4


class DeliveryEvents:
    def __init__(self, table: Table) -> None:
        self.table = table

    def apply(self, plan: EventPlan) -> ApplyResult:
        # While the receipt holds the event's provider message id, the entry stores its event id
        # relative to it (a resend's events may land on a receipt holding another).
        relative = True
        for requests in range(1, MAX_ATTEMPTS + 1):
            target = self._target_update(plan, relative) if plan.has_target else None
            recipient = self._recipient_update(plan)
            failed = self._write(plan, target, recipient)
            if failed is None:
                return ApplyResult(
                    duplicate=False,
                    message_updated=plan.move is not None,
                    prior_state=plan.prior_state,
                    suppressed_now=plan.suppression is not None,
                    already_suppressed=plan.already_suppressed,
                    transient_count=len(plan.transient.times) if plan.transient is not None else None,
                    requests=requests,
                )
            if _is_duplicate(failed, plan):
                return ApplyResult(duplicate=True, requests=requests)
            if "target" in failed and not failed["target"] and plan.message_id is None:
                # A receipt that does not exist (a send whose Publish answer we never got):
                # nothing was written; the caller looks the send up.
                return ApplyResult(duplicate=False, no_receipt=True, requests=requests)
            plan, relative = _narrowed(plan, failed, relative)
        raise DependencyUnavailable("event apply kept conflicting; retry", retry_after_seconds=1)

    def message_for_provider_id(
        self,
        provider_message_id: str,
        recipient_key: str | None,
        occurred_at: datetime,
        window_seconds: int,
        dedupe_key: str | None = None,
    ) -> SmsSendFound:
        """For a record whose receipt was missing: the receipt (written since), else the send to
        its number that names its provider id (the publisher has not written the receipt yet),
        else the number's send in the window whose Publish answer we never got.

        One BatchGetItem for the receipt, the number's recipient item and the dedupe item; one
        more for the recipient's last two sends' message items, when it has any.
        """
        keys = [(receipt_pk(provider_message_id), RECEIPT_SK)]
        if recipient_key:
            keys.append((recipient_pk(recipient_key), RECIPIENT_SK))
        if dedupe_key:
            keys.append((dedupe_key, EVENT_SK))
        found = {str(item["sk"]["S"]): item for item in self.table.batch_get(keys)}
        applied = EVENT_SK in found
        if RECEIPT_SK in found and "message_id" in found[RECEIPT_SK]:
            message_id = str(found[RECEIPT_SK]["message_id"]["S"])
            return SmsSendFound(SmsMatch.PROVIDER_ID, message_id, applied, requests=1)
        recent = recipients.recent_sends(found.get(RECIPIENT_SK))
        if not recent:
            return SmsSendFound(SmsMatch.NONE, None, applied, requests=1)
        items = self.table.batch_get([(message_pk(m), MESSAGE_SK) for m, _ in recent], ["pk", "provider_message_id"])
        named = {
            str(item["pk"]["S"]).removeprefix(MESSAGE_PK_PREFIX): item.get("provider_message_id", {}).get("S")
            for item in items
        }
        for message_id, _ in recent:
            if named.get(message_id) == provider_message_id:
                return SmsSendFound(SmsMatch.PROVIDER_ID, message_id, applied, requests=2)
        window = timedelta(seconds=window_seconds)
        for message_id, sent_at in recent:  # the newest first
            if message_id in named and named[message_id] is None and sent_at <= occurred_at <= sent_at + window:
                return SmsSendFound(SmsMatch.UNKNOWN_ID, message_id, applied, requests=2)
        return SmsSendFound(SmsMatch.NONE, None, applied, last_send_at=recent[0][1], requests=2)

    # --- what to write -------------------------------------------------------------------------
    def _target_update(self, plan: EventPlan, relative: bool) -> Update:
        event, move = plan.event, plan.move
        update, receipt = Update(), _target_key(plan)
        within = plan.receipt_id if receipt.by_provider_id else None  # an SMS receipt's key holds it
        if receipt.by_provider_id and plan.message_id:
            # The send is known: the record may write the receipt before the publisher does.
            update.set_if_absent("message_id", plan.message_id)
        if event.provider_message_id and not receipt.by_provider_id:
            update.set_if_absent("provider_message_id", event.provider_message_id)
            if relative:
                within = event.provider_message_id
                update.when(update.absent("provider_message_id") | update.equals("provider_message_id", within))
        if move is not None:
            update.set("state", move.target.value).set("updated_at", iso(plan.at))
            marker = (DueKind.OUTCOME, plan.at) if move.outcome_marker else None
            set_due(update, plan.receipt_id or plan.message_id or "", marker)
            if move.reason is not None:
                update.set("reason", move.reason)
            else:
                # Acceptance or delivery proven: a reason such as the send's ReadTimeoutError no
                # longer explains the state (it stays in the history as evidence).
                update.remove("reason")
            # A receipt has no state until an event proves one (the publisher's write sets none).
            update.when(update.absent("state") | update.one_of("state", [s.value for s in move.allowed_from]))
        history.append(update, plan.entry, derived_from=event.dedupe_key, within=within)
        if receipt.by_provider_id and not plan.message_id:
            update.when(update.present("pk"))  # only its send's writer knows whose it is
        return update

    def _recipient_update(self, plan: EventPlan) -> Update | None:
        if plan.event.recipient_key is None or (plan.suppression is None and plan.transient is None):
            return None
        update = Update()
        if plan.transient is not None:
            recipients.transient_window(update, plan.transient.times, plan.transient.known_revision, plan.at)
        if plan.suppression is not None and plan.recipient_entry is not None:
            recipients.suppress(update, plan.suppression.reason, plan.event.dedupe_key, plan.at)
            history.append(update, plan.recipient_entry)
        return update

    # --- writing ---------------------------------------------------------------------------------
    def _write(self, plan: EventPlan, target: Update | None, recipient: Update | None) -> dict[str, Item | None] | None:
        """None when written; else the labels whose condition failed, with their old items
        (empty: a transient conflict, nothing written)."""
        parts: list[tuple[str, str, str, Update | Item]] = []
        if target is not None:
            receipt = _target_key(plan)
            parts.append(("target", receipt.pk, receipt.sk, target))
        else:
            parts.append(("dedupe", plan.event.dedupe_key, EVENT_SK, _dedupe_item(plan)))
        if recipient is not None:
            assert plan.event.recipient_key is not None
            parts.append(("recipient", recipient_pk(plan.event.recipient_key), RECIPIENT_SK, recipient))
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
                tx.put(label, part, e.absent("pk"), e)
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
            self.table.put(part, e.absent("pk"), e)


def _narrowed(plan: EventPlan, failed: dict[str, Item | None], relative: bool) -> tuple[EventPlan, bool]:
    """What the failed conditions showed, for the plan to decide again."""
    refused, held_state, seen = False, None, None
    if "target" in failed:
        old = failed["target"] or {}
        held = old.get("provider_message_id", {}).get("S")
        if held is not None and held != plan.event.provider_message_id:
            relative = False
        held_state = old.get("state", {}).get("S")
        allowed = {state.value for state in plan.move.allowed_from} if plan.move else set()
        # The receipt is past what the event proves: record the event, keep the state.
        refused = plan.move is not None and (not old or (held_state is not None and held_state not in allowed))
    if "recipient" in failed:
        state = state_of(failed["recipient"])
        seen = RecipientSeen(state.suppression.suppressed, state.transient_times, state.transient_revision)
    narrowed = plan.narrowed(move_refused_by=held_state, refused=refused, recipient=seen)
    return narrowed, relative


def _is_duplicate(failed: dict[str, Item | None], plan: EventPlan) -> bool:
    if "dedupe" in failed:
        return True
    target = failed.get("target")
    return bool(target) and history.event_attribute(plan.event.dedupe_key) in (target or {})


def _target_key(plan: EventPlan) -> receipts.ReceiptKey:
    """Where the event's state and history land: the send's receipt."""
    if plan.receipt_id:
        return receipts.of_sms(plan.receipt_id)
    assert plan.message_id is not None
    return receipts.of_message(plan.message_id)


def _dedupe_item(plan: EventPlan) -> Item:
    event, now = plan.event, plan.at
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
