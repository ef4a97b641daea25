"""The ledger's DynamoDB Stream records (NEW_AND_OLD_IMAGES) read as status events.

Only committed writes reach the stream, so nothing is published for a change that did not
commit. Which item families change what:

- the message item (`MSG#<id>` / `MSG`): its `state` moved (an intent, an outcome, the poller);
- a receipt (`MSG#<id>` / `RCPT`, `PMID#<provider id>` / `PMID`): a delivery event moved the state
  readers see; the message item is read for what the receipt does not carry (all of it
  written once with the intent, so reading it later gives the same answer);
- the recipient item (`SUP#<key>` / `STATE`): its suppression `version` moved.

Everything else (history-only writes, last-send markers, TTL removals) publishes nothing.
"""

from __future__ import annotations

from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, decode
from sendledger.adapters.dynamodb.keys import (
    HISTORY_PREFIX,
    MESSAGE_RECEIPT_SK,
    MESSAGE_SK,
    RECEIPT_SK,
    RECIPIENT_SK,
    message_pk,
)
from sendledger.adapters.dynamodb.message_items import BUSINESS_EVENT_ID, message_from
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.clock import parse_iso
from sendledger.domain.messages import MessageState
from sendledger.domain.state_changes import (
    StatusEvent,
    actor_of,
    message_state_changed,
    receipt_previous,
    suppression_changed,
)


class LedgerStream:
    def __init__(self, table: Table) -> None:
        self.table = table

    def events_of(self, record: dict[str, Any]) -> list[StatusEvent]:
        change = record.get("dynamodb", {})
        if record.get("eventName") == "REMOVE":
            return []
        keys = change.get("Keys", {})
        pk, sk = keys.get("pk", {}).get("S", ""), keys.get("sk", {}).get("S", "")
        old: Item = change.get("OldImage") or {}
        new: Item = change.get("NewImage") or {}
        if sk == MESSAGE_SK and pk.startswith("MSG#"):
            return _message_item(old, new)
        if (sk == MESSAGE_RECEIPT_SK and pk.startswith("MSG#")) or (sk == RECEIPT_SK and pk.startswith("PMID#")):
            return self._receipt(pk, old, new)
        if sk == RECIPIENT_SK and pk.startswith("SUP#"):
            return _recipient(pk, old, new)
        return []

    def _receipt(self, pk: str, old: Item, new: Item) -> list[StatusEvent]:
        before, after = _state(old), _state(new)
        if after is None or after is before:
            return []
        message_id = text_of(new, "message_id") or pk.removeprefix("MSG#")
        item = self.table.get(message_pk(message_id), MESSAGE_SK)
        if not item:
            return []  # a receipt without its message: nothing a reader could see
        message = message_from(item)
        if message.state is after:
            return []  # the message item entered this state itself: its own record publishes it
        previous = receipt_previous(message.state, before, after)
        message.state = after
        message.reason = text_of(new, "reason") if after is not MessageState.DELIVERED else None
        message.provider_message_id = text_of(new, "provider_message_id") or message.provider_message_id or _sns_id(pk)
        occurred = parse_iso(text_of(new, "updated_at") or text_of(item, "updated_at") or "")
        return [
            message_state_changed(
                message,
                previous,
                write=after.value,
                occurred_at=occurred,
                business_event_id=text_of(item, BUSINESS_EVENT_ID),
            )
        ]


def _message_item(old: Item, new: Item) -> list[StatusEvent]:
    before, after = _state(old), _state(new)
    if after is None or after is before:
        return []
    message = message_from(new)
    # The entries this write added name it (an act's entry key is never reused).
    added = sorted(name for name in new if name.startswith(HISTORY_PREFIX) and name not in old)
    write = ",".join(added) or text_of(new, "updated_at") or ""
    return [
        message_state_changed(
            message,
            before,
            write=write,
            occurred_at=message.updated_at,
            business_event_id=text_of(new, BUSINESS_EVENT_ID),
        )
    ]


def _recipient(pk: str, old: Item, new: Item) -> list[StatusEvent]:
    version = _number(new, "version")
    if version is None or version == _number(old, "version"):
        return []  # a send's marker or an unchanged admin act: no suppression change
    occurred = text_of(new, "since") or text_of(new, "updated_at") or ""
    return [
        suppression_changed(
            pk.removeprefix("SUP#"),
            suppressed=bool(decode(new["suppressed"])) if "suppressed" in new else False,
            reason=text_of(new, "reason"),
            version=version,
            actor=actor_of(text_of(new, "source_event")),
            occurred_at=parse_iso(occurred),
        )
    ]


def item_change(record: dict[str, Any], sk: str) -> tuple[dict[str, Any], Item, Item] | None:
    """A stream record's keys, old and new images when it wrote (not removed) an item of sort key `sk`."""
    change = record.get("dynamodb", {})
    keys: dict[str, Any] = change.get("Keys", {})
    if keys.get("sk", {}).get("S") != sk or record.get("eventName") == "REMOVE":
        return None
    return keys, change.get("OldImage") or {}, change.get("NewImage") or {}


def text_of(image: Item, name: str) -> str | None:
    """A string attribute of an image (a NULL reads as None)."""
    value = image.get(name, {}).get("S")
    return str(value) if value is not None else None


def _state(image: Item) -> MessageState | None:
    raw = text_of(image, "state")
    try:
        return MessageState(raw) if raw else None
    except ValueError:
        return None  # an escalation timer's "scheduled" and the like are not message states


def _number(image: Item, name: str) -> int | None:
    value = image.get(name, {}).get("N")
    return int(value) if value is not None else None


def _sns_id(pk: str) -> str | None:
    return pk.removeprefix("PMID#") if pk.startswith("PMID#") else None
