"""The recipient item: suppression state, the last-send marker and the transient-bounce window.

Holding the marker beside the suppression state lets a send assert "not suppressed, and my
outcome knowable" and move the marker in one conditional update; the version every
suppression change increments is the optimistic lock the send's condition names.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import Expression, Item, Update, decode
from sendledger.adapters.dynamodb.keys import RECIPIENT_SK, recipient_pk
from sendledger.adapters.dynamodb.table import Cancelled, ConditionFailed, Table, Transaction
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.eligibility import NEVER_SUPPRESSED, SuppressionState
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import HistoryEntry, HistoryType
from sendledger.ports.messages import LastSendCondition, RecordLastSend
from sendledger.ports.recipients import RecipientState, SuppressionView

SUPPRESSED, VERSION, LAST_SEND_AT, LAST_MESSAGE_ID = "suppressed", "version", "last_send_at", "last_message_id"
# What an `allow` send's update records for its label (domain/eligibility.py RecordedSend): the
# marker it replaced (NULL on a first send) and its intent's cutoff (NULL: no watermark read).
PREVIOUS_SEND_AT, PREVIOUS_MESSAGE_ID, STALE_AFTER = "prev_send_at", "prev_message_id", "stale_after"
TRANSIENT_TIMES, TRANSIENT_REVISION = "transient_times", "transient_revision"


def state_of(item: Item | None) -> RecipientState:
    if not item:
        return RecipientState(NEVER_SUPPRESSED, None)
    values = {name: decode(value) for name, value in item.items() if not name.startswith("h:")}
    suppression = SuppressionState(
        suppressed=bool(values.get(SUPPRESSED, False)),
        version=int(values.get(VERSION, 0)),
        reason=values.get("reason"),
        since=parse_iso(values["since"]) if values.get("since") else None,
    )
    last = values.get(LAST_SEND_AT)
    return RecipientState(
        suppression,
        parse_iso(last) if last else None,
        values.get(LAST_MESSAGE_ID),
        transient_times=[parse_iso(t) for t in values.get(TRANSIENT_TIMES, [])],
        transient_revision=int(values.get(TRANSIENT_REVISION, 0)),
    )


def suppression_condition(update: Update, version: int) -> None:
    """Not suppressed, at exactly the version the caller decided from (0: never suppressed)."""
    if version == 0:
        update.when(update.absent(VERSION))
    else:
        update.when(update.equals(VERSION, version) & update.equals(SUPPRESSED, False))


def for_send(version: int, last_send: LastSendCondition | RecordLastSend, sent_at: datetime, message_id: str) -> Update:
    """The send's half of the intent: check eligibility and move the last-send marker."""
    update = Update()
    suppression_condition(update, version)
    if isinstance(last_send, RecordLastSend):
        # SET's right-hand sides read the item as it was: the marker this write replaces (a
        # plain copy would fail on a first send, where there is none: hence if_not_exists).
        update.copy_from(PREVIOUS_SEND_AT, LAST_SEND_AT, None).copy_from(PREVIOUS_MESSAGE_ID, LAST_MESSAGE_ID, None)
        update.set(STALE_AFTER, iso(last_send.stale_after) if last_send.stale_after else None)
    else:
        update.remove(PREVIOUS_SEND_AT, PREVIOUS_MESSAGE_ID, STALE_AFTER)  # decided at the intent: no label
        if last_send.value is None:
            update.when(update.absent(LAST_SEND_AT))
        elif last_send.exact:
            update.when(update.equals(LAST_SEND_AT, iso(last_send.value)))
        else:
            update.when(update.absent(LAST_SEND_AT) | update.at_most(LAST_SEND_AT, iso(last_send.value)))
    return update.set(LAST_SEND_AT, iso(sent_at)).set(LAST_MESSAGE_ID, message_id)


def recent_sends(item: Item | None) -> list[tuple[str, datetime]]:
    """The number's last send and (an `allow` send recorded it) the one before: (message id,
    sent at), the newest first."""
    if not item:
        return []
    found = []
    for message_name, at_name in ((LAST_MESSAGE_ID, LAST_SEND_AT), (PREVIOUS_MESSAGE_ID, PREVIOUS_SEND_AT)):
        message_id, sent_at = item.get(message_name, {}).get("S"), item.get(at_name, {}).get("S")
        if message_id and sent_at:
            found.append((str(message_id), parse_iso(str(sent_at))))
    return found


def check_not_suppressed(tx: Transaction, recipient_key: str) -> None:
    """Condition a transaction on the recipient not being suppressed (label "recipient")."""
    e = Expression()
    condition = e.absent(SUPPRESSED) | e.equals(SUPPRESSED, False)
    tx.check("recipient", recipient_pk(recipient_key), RECIPIENT_SK, condition, e)


def suppress(update: Update, reason: str, source_event: str, now: datetime) -> Update:
    """An event's suppression: only if not suppressed yet; the version moves by one."""
    update.add(VERSION, 1).set(SUPPRESSED, True).set("reason", reason).set("since", iso(now))
    update.set("source_event", source_event).set("updated_at", iso(now))
    update.when(update.absent(SUPPRESSED) | update.equals(SUPPRESSED, False))
    return update


def transient_window(update: Update, times: list[datetime], known_revision: int | None, now: datetime) -> Update:
    """Replace the window's times, conditioned on the revision read (None: optimistic first bounce)."""
    update.set(TRANSIENT_TIMES, [iso(t) for t in times]).set(TRANSIENT_REVISION, (known_revision or 0) + 1)
    update.set("updated_at", iso(now))
    if not known_revision:
        update.when(update.absent(TRANSIENT_REVISION))
    else:
        update.when(update.equals(TRANSIENT_REVISION, known_revision))
    return update


class Recipients:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, recipient_key: str) -> RecipientState:
        return state_of(self.table.get(recipient_pk(recipient_key), RECIPIENT_SK))

    def view(self, recipient_key: str) -> SuppressionView:
        item = self.table.get(recipient_pk(recipient_key), RECIPIENT_SK) or {}
        entries = history.in_order(history.entries_of(item))
        return SuppressionView(
            state=state_of(item).suppression,
            history=[{"at": iso(entry.at), "type": entry.type.value, **entry.evidence} for entry in entries],
        )

    def change(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState:
        """An admin act: lands only on the version the caller read."""
        new_version = expected_version + 1
        update = Update().set(SUPPRESSED, suppressed).set(VERSION, new_version).set("reason", reason)
        update.set("since", iso(now)).set("source_event", f"admin:{actor}").set("updated_at", iso(now))
        self._version_is(update, expected_version)
        entry = _admin_entry(suppressed, now, {"actor": actor, "reason": reason, "version": new_version}, new_version)
        history.append(update, entry)
        self._write(recipient_key, update)
        return SuppressionState(suppressed=suppressed, version=new_version, reason=reason, since=now)

    def record_unchanged(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        """An admin act that changes nothing is still audited: history only, on the version read."""
        update = Update()
        self._version_is(update, version)
        evidence = {"actor": actor, "reason": reason, "version": version, "unchanged": True}
        history.append(update, _admin_entry(suppressed, now, evidence, version))
        self._write(recipient_key, update)

    def _version_is(self, update: Update, version: int) -> None:
        update.when(update.absent(VERSION) if version == 0 else update.equals(VERSION, version))

    def _write(self, recipient_key: str, update: Update) -> None:
        try:
            self.table.update(recipient_pk(recipient_key), RECIPIENT_SK, update)
        except ConditionFailed:
            raise DependencyUnavailable("suppression changed concurrently; retry", retry_after_seconds=1) from None


def _admin_entry(suppressed: bool, now: datetime, evidence: dict[str, Any], version: int) -> HistoryEntry:
    # Acts in the same millisecond keep their order: the version is the step.
    return HistoryEntry(
        at=now,
        type=HistoryType.SUPPRESSED if suppressed else HistoryType.UNSUPPRESSED,
        evidence={**evidence, "source": "admin"},
        step=version % 100,
    )


def failed_recipient(cancelled: Cancelled, label: str = "recipient") -> RecipientState | None:
    """The recipient as it was, when its condition cancelled a transaction (else None)."""
    if label not in cancelled.failed:
        return None
    return state_of(cancelled.failed[label])
