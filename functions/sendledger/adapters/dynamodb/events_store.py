"""Applying delivery events to the ledger table, and the poller's bookkeeping.

One TransactWriteItems per new event:
- the dedupe item `EVT#<source>#<event id>` (put, attribute_not_exists, TTL),
- the state update, conditioned on the states the event may move it from: on the message
  row, or for an SNS SMS status record on the send's receipt (`PMID#<SNS message id>`, written
  by the send's outcome transaction), since the record names only SNS's message id,
- the history entry (append-only put) in the same partition as the state it explains,
- when suppressing: the suppression item (`ADD version 1`, SET suppressed/reason/since/
  source_event; only if not already suppressed) and a suppression history entry,
- for a transient bounce: the recipient's transient-bounce window item.

A duplicate fails on the dedupe condition: one request, nothing changes. When another
condition fails (the message is already past what the event proves, the recipient is already
suppressed, the transient window moved) the cancelled transaction hands back the old items; we
commit again without (or with an exact version of) that part, so dedupe, history and
suppression still land and out-of-order events converge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pynamodb.expressions.update import Action

from sendledger import names
from sendledger.adapters.dynamodb.ledger import (
    RECEIPT_SK,
    STATE_SK,
    DynamoLedger,
    check_not_suppressed,
    dependency_guard,
    history_item,
    history_item_for,
    is_condition_failure,
    msg_pk,
    receipt_pk,
    sup_pk,
    wm_pk,
)
from sendledger.adapters.dynamodb.models import (
    EscalationItem,
    EventItem,
    HistoryItem,
    LastSendItem,
    MessageItem,
    ReceiptItem,
    SuppressionItem,
    TransientBounceItem,
    WatermarkItem,
)
from sendledger.adapters.dynamodb.transaction import Cancelled, LabelledTransaction
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import DeliveryEvent
from sendledger.domain.messages import DueKind, HistoryEntry, HistoryType, MessageState, Transition
from sendledger.domain.suppression_rules import TransientPolicy
from sendledger.ports import ApplyPlan, ApplyResult, DueItem

EVENT_SK = "EVT"
TRANSIENT_SK = "TRANSIENT"
ESC_SK = "ESC"
EVENT_RETENTION_DAYS = 30  # > SQS retention (14 d) and SMS status delay (72 h)
MAX_ATTEMPTS = 4


@dataclass
class _ApplyState:
    """What the next attempt of one event's transaction includes (narrowed by cancellations)."""

    include_message: bool
    include_history: bool
    include_suppression: bool
    suppress_reason: str | None
    count_transient: bool
    transient_reason: str | None
    policy: TransientPolicy
    transient: tuple[int, list[str]] | None = None  # (revision, times) once read back
    prior_state: str | None = None
    already_suppressed: bool = False
    counted: int | None = None
    no_receipt: bool = False

    @classmethod
    def start(cls, event: DeliveryEvent, plan: ApplyPlan) -> _ApplyState:
        has_recipient = event.recipient_key is not None
        matched = plan.message_id is not None or plan.receipt_id is not None
        return cls(
            include_message=matched and plan.target is not None,
            include_history=matched,
            include_suppression=plan.suppress_reason is not None and has_recipient,
            suppress_reason=plan.suppress_reason,
            count_transient=plan.count_transient_reason is not None and has_recipient,
            transient_reason=plan.count_transient_reason,
            policy=TransientPolicy(plan.transient_limit, timedelta(seconds=plan.transient_window_seconds)),
        )

    @property
    def transient_count(self) -> int | None:
        if not self.count_transient:
            return None
        return self.counted or 1

    def decide_transient(self, event: DeliveryEvent) -> None:
        if not self.count_transient or self.transient is None or self.include_suppression:
            return
        window = self.policy.window_after([parse_iso(t) for t in self.transient[1]], event.occurred_at)
        self.counted = len(window)
        if self.policy.reached(window) and not self.already_suppressed:
            self.include_suppression, self.suppress_reason = True, self.transient_reason

    def absorb(self, failed: dict[str, dict[str, Any] | None], plan: ApplyPlan) -> None:
        if "message" in failed:
            self.include_message = False
            old = failed["message"]
            if old is None:  # no such message (another stack's tag): keep no orphan history
                self.include_history = False
                self.no_receipt = plan.message_id is None and plan.receipt_id is not None
            else:
                self.prior_state = str(old["state"]["S"]) if "state" in old else None
        if "suppression" in failed:
            self.include_suppression, self.already_suppressed = False, True
        if "transient" in failed:
            old = failed["transient"]
            if old is not None:
                item = TransientBounceItem.from_raw_data(old)
                self.transient = (int(item.revision), [str(t) for t in item.times or []])
            else:
                self.transient = (0, [])


class DynamoEventStore:
    """The EventStore port on the ledger table; shares the ledger's client (one request count)."""

    def __init__(self, ledger: DynamoLedger, retention_days: int = EVENT_RETENTION_DAYS) -> None:
        self.ledger = ledger
        self.table_name = ledger.table_name
        self.retention = timedelta(days=retention_days)

    @property
    def _client(self) -> Any:
        return self.ledger._connection.client

    def _tx(self) -> LabelledTransaction:
        return LabelledTransaction(self.ledger._connection)

    # --- events ---------------------------------------------------------------------------
    def apply_event(self, event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> ApplyResult:
        state = _ApplyState.start(event, plan)
        requests = 0
        for _ in range(MAX_ATTEMPTS):
            state.decide_transient(event)
            tx = self._tx()
            self._build(tx, state, event, plan, now)
            requests += 1
            try:
                with dependency_guard():
                    tx.commit()
            except Cancelled as cancelled:
                if "dedupe" in cancelled.failed:
                    return ApplyResult(duplicate=True, requests=requests)
                if not cancelled.retryable and cancelled.failed:
                    state.absorb(cancelled.failed, plan)
                if state.no_receipt:  # a send whose Publish answer we never got: the caller looks it up
                    return ApplyResult(duplicate=False, no_receipt=True, requests=requests)
                continue
            return ApplyResult(
                duplicate=False,
                message_updated=state.include_message,
                prior_state=state.prior_state,
                suppressed_now=state.include_suppression,
                already_suppressed=state.already_suppressed,
                transient_count=state.transient_count,
                requests=requests,
            )
        raise DependencyUnavailable("event apply kept conflicting; retry", retry_after_seconds=1)

    def _build(
        self, tx: LabelledTransaction, state: _ApplyState, event: DeliveryEvent, plan: ApplyPlan, now: datetime
    ) -> None:
        tx.put("dedupe", self._event_item(event, plan, now), EventItem.pk.does_not_exist())
        if state.include_message and plan.target:
            self._add_state_update(tx, event, plan, plan.target, now)
        if state.include_history:
            entry = self._message_entry(
                event, plan, now, state.include_message, state.prior_state, state.include_suppression
            )
            _, item = _state_item(plan)  # the history goes beside the state it explains
            tx.put("history", history_item_for(item.pk, entry), HistoryItem.pk.does_not_exist())
        if state.include_suppression and event.recipient_key and state.suppress_reason:
            self._add_suppression(tx, event, state.suppress_reason, now)
        if state.count_transient and event.recipient_key:
            self._add_transient(tx, event, state.policy, state.transient, now)

    def _event_item(self, event: DeliveryEvent, plan: ApplyPlan, now: datetime) -> EventItem:
        return EventItem(
            event.dedupe_key,
            EVENT_SK,
            source=event.source.value,
            kind=event.kind.value,
            occurred_at=iso(event.occurred_at),
            applied_at=iso(now),
            message_id=plan.message_id,
            recipient=event.recipient_fingerprint,
            expires_at=now + self.retention,
        )

    def _add_state_update(
        self, tx: LabelledTransaction, event: DeliveryEvent, plan: ApplyPlan, target: MessageState, now: datetime
    ) -> None:
        """The proven state on the message row, or on the SMS receipt (labelled "message" either way)."""
        model, item = _state_item(plan)
        actions: list[Action] = [model.state.set(target.value), model.updated_at.set(iso(now))]
        if model is MessageItem and event.provider_message_id:
            actions.append(
                MessageItem.provider_message_id.set(MessageItem.provider_message_id | event.provider_message_id)
            )
        if target in (MessageState.BOUNCED, MessageState.COMPLAINED, MessageState.FAILED, MessageState.REJECTED):
            actions.append(model.reason.set(_reason_of(event)))
            # Escalation may act before the deadline once a message failed for good: the poller
            # checks this message (and drops the marker when it has no escalation).
            actions += [model.due_kind.set(DueKind.OUTCOME.value), model.due_at.set(int(now.timestamp()))]
        else:
            # Acceptance or delivery proven: a reason such as the send's ReadTimeoutError no
            # longer explains the state (it stays in the history as evidence).
            actions += [model.due_kind.remove(), model.due_at.remove(), model.reason.remove()]
        condition = model.pk.exists() & model.state.is_in(*sorted(s.value for s in plan.allowed_from))
        tx.update("message", item, actions, condition)

    def _message_entry(
        self,
        event: DeliveryEvent,
        plan: ApplyPlan,
        now: datetime,
        applied: bool,
        prior_state: str | None,
        suppressing: bool,
    ) -> HistoryEntry:
        evidence: dict[str, Any] = {
            "event_id": event.event_id,
            "event_source": event.source.value,
            "event_at": iso(event.occurred_at),
            "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
            "recipient": event.recipient_fingerprint,
            "provider_message_id": event.provider_message_id,
            **event.evidence,
        }
        if not applied and plan.target is not None:
            evidence["state_unchanged"] = prior_state
            evidence["would_be"] = plan.target.value
        if suppressing:
            evidence["suppressed_recipient"] = True
        return HistoryEntry(
            at=now,
            type=HistoryType.of_event(event.kind.value),
            state=plan.target if applied else None,
            evidence=evidence,
            step=2,
        )

    def _add_suppression(self, tx: LabelledTransaction, event: DeliveryEvent, reason: str, now: datetime) -> None:
        assert event.recipient_key is not None
        pk = sup_pk(event.recipient_key)
        item = SuppressionItem(pk, STATE_SK)
        actions: list[Action] = [
            SuppressionItem.version.add(1),
            SuppressionItem.suppressed.set(True),
            SuppressionItem.reason.set(reason),
            SuppressionItem.since.set(iso(now)),
            SuppressionItem.source_event.set(event.dedupe_key),
            SuppressionItem.updated_at.set(iso(now)),
        ]
        condition = SuppressionItem.pk.does_not_exist() | (SuppressionItem.suppressed == False)  # noqa: E712
        tx.update("suppression", item, actions, condition)
        entry = HistoryEntry(
            at=now,
            type=HistoryType.SUPPRESSED,
            evidence={
                "source": event.source.value,
                "event_id": event.event_id,
                "event_at": iso(event.occurred_at),
                "reason": reason,
                "actor": "sendledger-events",
            },
        )
        tx.put("sup_history", history_item_for(pk, entry), HistoryItem.pk.does_not_exist())

    def _add_transient(
        self,
        tx: LabelledTransaction,
        event: DeliveryEvent,
        policy: TransientPolicy,
        known: tuple[int, list[str]] | None,
        now: datetime,
    ) -> None:
        assert event.recipient_key is not None
        pk = sup_pk(event.recipient_key)
        if known is None:
            # Optimistic: the recipient's first transient bounce. Otherwise the cancellation
            # returns the window item and we write the exact next revision.
            item = TransientBounceItem(
                pk, TRANSIENT_SK, times=[iso(event.occurred_at)], revision=1, updated_at=iso(now)
            )
            tx.put("transient", item, TransientBounceItem.pk.does_not_exist())
            return
        revision, times = known
        window = policy.window_after([parse_iso(t) for t in times], event.occurred_at)
        item = TransientBounceItem(
            pk, TRANSIENT_SK, times=[iso(t) for t in window], revision=revision + 1, updated_at=iso(now)
        )
        condition = (
            TransientBounceItem.pk.does_not_exist() if revision == 0 else TransientBounceItem.revision == revision
        )
        tx.put("transient", item, condition)

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

        One BatchGetItem for both (a delivery-status record for the same destination
        inside the send window proves the outcome of a send whose call timed out).
        """
        keys = [{"pk": {"S": receipt_pk(provider_message_id)}, "sk": {"S": RECEIPT_SK}}]
        if recipient_key:
            keys.append({"pk": {"S": sup_pk(recipient_key)}, "sk": {"S": "LAST"}})
        if dedupe_key:
            keys.append({"pk": {"S": dedupe_key}, "sk": {"S": EVENT_SK}})
        with dependency_guard():
            response = self._client.batch_get_item(
                RequestItems={self.table_name: {"Keys": keys, "ConsistentRead": True}}
            )
        found = {item["sk"]["S"]: item for item in response.get("Responses", {}).get(self.table_name, [])}
        applied = EVENT_SK in found
        if RECEIPT_SK in found:
            return str(found[RECEIPT_SK]["message_id"]["S"]), applied
        if "LAST" in found:
            last = LastSendItem.from_raw_data(found["LAST"])
            sent_at = parse_iso(last.last_send_at)
            if sent_at <= occurred_at <= sent_at + timedelta(seconds=window_seconds):
                return str(last.last_message_id), applied
        return None, applied

    # --- watermarks and cursors -------------------------------------------------------------
    def set_watermark(self, source: str, at: datetime) -> None:
        item = WatermarkItem(wm_pk(source), "WM")
        try:
            with dependency_guard():
                item.update(
                    actions=[WatermarkItem.watermark.set(iso(at)), WatermarkItem.updated_at.set(iso(at))],
                    condition=WatermarkItem.watermark.does_not_exist() | (WatermarkItem.watermark < iso(at)),
                )
        except DependencyUnavailable as exc:
            if not is_condition_failure(exc):
                raise
            # Never move a watermark backwards (an older cycle finishing late).

    def get_cursor(self, source: str) -> str | None:
        with dependency_guard():
            try:
                item = WatermarkItem.get(wm_pk(source), "WM", consistent_read=True)
            except WatermarkItem.DoesNotExist:
                return None
        return item.cursor

    def put_cursor(self, source: str, previous: str | None, cursor: str, now: datetime) -> None:
        condition = WatermarkItem.cursor.does_not_exist() if previous is None else WatermarkItem.cursor == previous
        try:
            with dependency_guard():
                WatermarkItem(wm_pk(source), "WM").update(
                    actions=[WatermarkItem.cursor.set(cursor), WatermarkItem.updated_at.set(iso(now))],
                    condition=condition,
                )
        except DependencyUnavailable as exc:
            if is_condition_failure(exc):
                raise DependencyUnavailable("log cursor moved concurrently", retry_after_seconds=1) from None
            raise

    # --- due work ---------------------------------------------------------------------------
    def due_items(self, kind: DueKind, until: datetime | None, limit: int) -> list[DueItem]:
        values: dict[str, Any] = {":k": {"S": kind.value}}
        expression = "#k = :k"
        names_map = {"#k": names.DUE_WORK_INDEX_PARTITION_KEY}
        if until is not None:
            expression += " AND #a <= :a"
            names_map["#a"] = names.DUE_WORK_INDEX_SORT_KEY
            values[":a"] = {"N": str(int(until.timestamp()))}
        items: list[DueItem] = []
        start: dict[str, Any] | None = None
        while len(items) < limit:
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": names.DUE_WORK_INDEX,
                "KeyConditionExpression": expression,
                "ExpressionAttributeNames": names_map,
                "ExpressionAttributeValues": values,
                "Limit": min(100, limit - len(items)),
            }
            if start:
                kwargs["ExclusiveStartKey"] = start
            with dependency_guard():
                page = self._client.query(**kwargs)
            items += [_due_from(raw) for raw in page.get("Items", [])]
            start = page.get("LastEvaluatedKey")
            if not start:
                break
        return items

    def count_due(self, kind: DueKind) -> int:
        total = 0
        start: dict[str, Any] | None = None
        while True:
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": names.DUE_WORK_INDEX,
                "KeyConditionExpression": "#k = :k",
                "ExpressionAttributeNames": {"#k": names.DUE_WORK_INDEX_PARTITION_KEY},
                "ExpressionAttributeValues": {":k": {"S": kind.value}},
                "Select": "COUNT",
            }
            if start:
                kwargs["ExclusiveStartKey"] = start
            with dependency_guard():
                page = self._client.query(**kwargs)
            total += int(page.get("Count", 0))
            start = page.get("LastEvaluatedKey")
            if not start:
                return total

    def transition(
        self,
        message_id: str,
        allowed: frozenset[MessageState],
        target: MessageState,
        entries: list[HistoryEntry],
        due: tuple[DueKind, datetime] | None,
        attempt: int | None = None,
        unsuppressed: str | None = None,
    ) -> Transition:
        at = entries[-1].at if entries else None
        actions: list[Action] = [MessageItem.state.set(target.value)]
        if at is not None:
            actions.append(MessageItem.updated_at.set(iso(at)))
        if attempt is not None:
            actions.append(MessageItem.attempt.set(attempt))
        if due is not None:
            actions += [MessageItem.due_kind.set(due[0]), MessageItem.due_at.set(int(due[1].timestamp()))]
        else:
            actions += [MessageItem.due_kind.remove(), MessageItem.due_at.remove()]
        tx = self._tx()
        tx.update(
            "message",
            MessageItem(msg_pk(message_id), "MSG"),
            actions,
            MessageItem.pk.exists() & MessageItem.state.is_in(*sorted(s.value for s in allowed)),
        )
        for index, entry in enumerate(entries):
            tx.put(f"history{index}", history_item(message_id, entry), HistoryItem.pk.does_not_exist())
        if unsuppressed is not None:
            check_not_suppressed(tx, unsuppressed)
        try:
            with dependency_guard():
                tx.commit()
        except Cancelled as cancelled:
            if "suppression" in cancelled.failed:
                return Transition.SUPPRESSED
            if "message" in cancelled.failed:
                return Transition.MOVED_ON
            raise DependencyUnavailable("state transition conflicted; retry", retry_after_seconds=1) from None
        return Transition.APPLIED

    def clear_due(self, message_id: str, kind: DueKind, receipt_id: str | None = None) -> None:
        model, item = _row_or_receipt(message_id, receipt_id)
        try:
            with dependency_guard():
                item.update(
                    actions=[model.due_kind.remove(), model.due_at.remove()],
                    condition=model.due_kind == kind.value,
                )
        except DependencyUnavailable as exc:
            if not is_condition_failure(exc):
                raise

    def idempotency_key_of(self, message_id: str) -> str | None:
        with dependency_guard():
            try:
                item = MessageItem.get(msg_pk(message_id), "MSG", consistent_read=True)
            except MessageItem.DoesNotExist:
                return None
        return item.idempotency_pk.removeprefix("IDEM#") if item.idempotency_pk else None

    def finish_escalation(
        self,
        message_id: str,
        entry: HistoryEntry,
        escalate_message: bool,
        outcome: str,
        receipt_id: str | None = None,
    ) -> None:
        """ESC item done + (message → escalated) + history, in one transaction; idempotent.

        An SMS's delivery lands on its receipt, so the receipt is checked too: a status record
        that proved delivery meanwhile stops the escalated claim, as the message row's would.
        """
        for _ in range(2):
            tx = self._tx()
            tx.update(
                "escalation",
                EscalationItem(msg_pk(message_id), ESC_SK),
                [
                    EscalationItem.state.set("done"),
                    EscalationItem.outcome.set(outcome),
                    EscalationItem.updated_at.set(iso(entry.at)),
                    EscalationItem.due_kind.remove(),
                    EscalationItem.due_at.remove(),
                ],
                EscalationItem.state == "scheduled",
            )
            if escalate_message:
                allowed = [s.value for s in MessageState if s not in (MessageState.DELIVERED, MessageState.ESCALATED)]
                tx.update(
                    "message",
                    MessageItem(msg_pk(message_id), "MSG"),
                    [
                        MessageItem.state.set(MessageState.ESCALATED.value),
                        MessageItem.updated_at.set(iso(entry.at)),
                        MessageItem.due_kind.remove(),
                        MessageItem.due_at.remove(),
                    ],
                    MessageItem.state.is_in(*sorted(allowed)),
                )
                if receipt_id:
                    tx.check(
                        "receipt",
                        ReceiptItem,
                        receipt_pk(receipt_id),
                        RECEIPT_SK,
                        ReceiptItem.pk.does_not_exist() | (ReceiptItem.state != MessageState.DELIVERED.value),
                    )
            tx.put("history", history_item(message_id, entry), HistoryItem.pk.does_not_exist())
            try:
                with dependency_guard():
                    tx.commit()
                return
            except Cancelled as cancelled:
                if "escalation" in cancelled.failed:
                    return  # already finished by an earlier run
                if "message" in cancelled.failed or "receipt" in cancelled.failed:
                    escalate_message = False  # delivered meanwhile: record, do not claim escalated
                    continue
                raise DependencyUnavailable("escalation write conflicted; retry", retry_after_seconds=1) from None


def _state_item(plan: ApplyPlan) -> tuple[type[MessageItem] | type[ReceiptItem], MessageItem | ReceiptItem]:
    """Where the event's state change lands: the message row, or an SMS send's receipt."""
    return _row_or_receipt(plan.message_id, None if plan.message_id else plan.receipt_id)


def _row_or_receipt(
    message_id: str | None, receipt_id: str | None
) -> tuple[type[MessageItem] | type[ReceiptItem], MessageItem | ReceiptItem]:
    if receipt_id:
        return ReceiptItem, ReceiptItem(receipt_pk(receipt_id), RECEIPT_SK)
    if not message_id:
        raise ValueError("a message id or a receipt id is needed")
    return MessageItem, MessageItem(msg_pk(message_id), "MSG")


def _reason_of(event: DeliveryEvent) -> str:
    if event.bounce_type:
        return f"bounce: {event.bounce_type}/{event.bounce_subtype}"
    if event.provider_response:
        return f"{event.kind.value}: {event.provider_response}"
    return event.kind.value


def _due_from(raw: dict[str, Any]) -> DueItem:
    def text(name: str) -> str | None:
        value = raw.get(name)
        return str(value["S"]) if value and "S" in value else None

    escalation = text("escalation")
    idem = text("idempotency_pk")
    pk = str(raw["pk"]["S"])
    return DueItem(
        kind=DueKind(raw[names.DUE_WORK_INDEX_PARTITION_KEY]["S"]),  # the index's own key: always there
        message_id=text("message_id") or pk.removeprefix("MSG#"),
        due_at=int(raw[names.DUE_WORK_INDEX_SORT_KEY]["N"]),
        state=text("state") or "",
        escalation=json.loads(escalation) if escalation else None,
        idempotency_key=idem.removeprefix("IDEM#") if idem else None,
        receipt_id=pk.removeprefix("PMID#") if pk.startswith("PMID#") else None,
        escalates=escalation is not None or bool(raw.get("escalates", {}).get("BOOL")),
    )
