"""The event invariant: no lost or duplicated state-change event.

Beside every whole-ledger check, the watch hands the stream records committed since the last
check to the publisher's own reading of them (the records are moto's stream, read from its
backend like the table scan; a receipt's message is read from the same scan) and holds what it
would publish against what the ledger showed:

- not lost: every state a reader saw a message in (message item folded with its receipts), and
  every suppression version, has an event;
- not duplicated: one change is one id. A state a message enters at most once has one id; a
  state a retry re-enters has at most one id per write that entered it (its history entry);
  and an id always describes the same change (the evidence a sighting carries, such as the
  provider's message id, may differ between the message item's and the receipt's sighting).
"""

from __future__ import annotations

import json
import weakref
from collections import deque
from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from local.status_out import forget_read_records
from sendledger.adapters.dynamodb.stream import LedgerStream
from sendledger.domain.messages import TERMINAL, MessageState
from sendledger.domain.state_changes import DetailType, StatusEvent
from tests.conftest import TABLE

ENTERED_ONCE = {state.value for state in TERMINAL} | {MessageState.ACCEPTED.value}


class Snapshot:
    """The table as one scan saw it, answering the publisher's GetItem."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = {(i["pk"]["S"], i["sk"]["S"]): i for i in items}

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return self.items.get((pk, sk))


class StreamTap:
    """moto's stream of the ledger table, read once in this process and handed to every reader.

    Each record is read from moto's backend, handed to every reader alive, then dropped from
    moto (which otherwise keeps and deep-copies them forever, see forget_read_records): the
    ledger watch and the publisher's event source each see every record once, whichever
    reads first.
    """

    def __init__(self) -> None:
        self._readers: weakref.WeakSet[TapReader] = weakref.WeakSet()

    def reader(self) -> TapReader:
        """A reader from now on: what was committed before it was opened is not its own."""
        self.pull()
        reader = TapReader(self)
        self._readers.add(reader)
        return reader

    def pull(self) -> None:
        records = _records()
        if not records:
            return
        shaped = [json.loads(json.dumps(raw.to_json(), default=str)) for raw in records]
        for reader in list(self._readers):
            reader.records.extend(shaped)
        _forget(len(records))


class TapReader:
    def __init__(self, tap: StreamTap) -> None:
        self.tap = tap
        self.records: deque[dict[str, Any]] = deque()

    def take(self) -> list[dict[str, Any]]:
        """Every record committed since the last take, oldest first."""
        self.tap.pull()
        taken = list(self.records)
        self.records.clear()
        return taken


STREAM = StreamTap()


class StatusEventWatch:
    def __init__(self) -> None:
        self.stream = STREAM.reader()  # a watch starts with its run: earlier runs' records are not its own
        self.events: dict[str, StatusEvent] = {}
        self.seen_states: set[tuple[str, str]] = set()
        self.seen_versions: set[tuple[str, int]] = set()
        self.entered: dict[tuple[str, str], int] = {}  # (message, state) → message-item writes into it

    def check(self, items: list[dict[str, Any]], merged: dict[str, str]) -> None:
        """`merged`: message id → the state readers see now (read from `items`)."""
        for message_id, state in merged.items():
            self.seen_states.add((message_id, state))
        for item in items:
            if item["pk"]["S"].startswith("SUP#") and "version" in item:
                self.seen_versions.add((item["pk"]["S"].removeprefix("SUP#"), int(item["version"]["N"])))
        # The stream after the scan: it holds at least every change the scan shows.
        stream = LedgerStream(Snapshot(items))  # type: ignore[arg-type]
        for record in self.stream.take():
            self._count_entering_write(record)
            for event in stream.events_of(record):
                self._one_change_one_id(event)
        self._nothing_lost()

    def _count_entering_write(self, record: dict[str, Any]) -> None:
        change = record["dynamodb"]
        if change["Keys"]["sk"]["S"] != "MSG" or not change["Keys"]["pk"]["S"].startswith("MSG#"):
            return
        before = change.get("OldImage", {}).get("state", {}).get("S")
        after = change.get("NewImage", {}).get("state", {}).get("S")
        if after is not None and after != before:
            key = (change["Keys"]["pk"]["S"].removeprefix("MSG#"), after)
            self.entered[key] = self.entered.get(key, 0) + 1

    def _one_change_one_id(self, event: StatusEvent) -> None:
        known = self.events.setdefault(event.event_id, event)
        assert change_of(known.detail) == change_of(event.detail), (
            f"one event id, two changes: {known.detail} / {event.detail}"
        )
        if event.detail_type is not DetailType.MESSAGE_STATE_CHANGED:
            return
        message_id, state = event.detail["message_id"], event.detail["state"]
        ids = {e.event_id for e in self.events.values() if e.detail.get("message_id") == message_id}
        ids_for_state = {i for i in ids if self.events[i].detail["state"] == state}
        if state in ENTERED_ONCE:
            assert len(ids_for_state) == 1, f"{message_id} entered {state} once, published as {sorted(ids_for_state)}"
        else:
            entered = self.entered.get((message_id, state), 0)
            assert len(ids_for_state) <= entered, (
                f"{message_id} entered {state} {entered} times, published as {len(ids_for_state)} ids"
            )

    def _nothing_lost(self) -> None:
        published = {
            (e.detail["message_id"], e.detail["state"])
            for e in self.events.values()
            if e.detail_type is DetailType.MESSAGE_STATE_CHANGED
        }
        lost = self.seen_states - published
        assert not lost, f"state changes a reader saw but no event published: {sorted(lost)}"
        versions = {
            (e.detail["recipient"], e.detail["version"])
            for e in self.events.values()
            if e.detail_type is DetailType.SUPPRESSION_CHANGED
        }
        missing = {(key, v) for key, v in self.seen_versions if (key.partition(":")[2], v) not in versions}
        assert not missing, f"suppression changes without an event: {sorted(missing)}"


# What a sighting adds as evidence: the message item and a receipt may both show one state entered
# (the send's answer and an SES event), each with its own provider id, reason and time.
_EVIDENCE = frozenset({"previous_state", "provider_message_id", "reason", "occurred_at"})


def change_of(detail: dict[str, Any]) -> dict[str, Any]:
    """What one id must always describe: the message (or recipient) and the state it entered."""
    return {k: v for k, v in detail.items() if k not in _EVIDENCE}


def _forget(count: int) -> None:
    try:
        forget_read_records(TABLE, count, "us-east-1")
    except Exception:
        return  # no table yet


def _records() -> list[Any]:
    """moto's stream of the ledger table, from its backend (the scan's ground truth, in order)."""
    try:
        table = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(TABLE)
    except Exception:
        return []  # no table yet: nothing written
    shard = table.stream_shard
    return list(shard.items) if shard is not None else []
