"""History entries as write-once attributes of the item whose state they explain."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sendledger.adapters.dynamodb.expressions import Item, Update
from sendledger.adapters.dynamodb.keys import (
    HISTORY_PREFIX,
    RECEIPT_PK_PREFIX,
    RECEIPT_SK,
    entry_key,
    history_attribute,
)
from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# An entry's JSON fields. One-letter names: every entry is billed by the byte on each write of
# its item, and an item past 1 KB costs another write unit on every write that touches it.
TYPE, STATE, EVIDENCE, AT, STEP = "t", "s", "e", "a", "p"


# An event id that starts with its receipt's provider message id is stored without it.
EVENT_ID, EVENT_REF = "event_id", "event_ref"
PROVIDER_MESSAGE_ID = "provider_message_id"
# The evidence every send's intent and outcome entries carry, stored under one capital letter
# each (no evidence name is capitalised: the codes cannot be mistaken for a name), and the
# commonest entry types under one small letter (no type is one letter). Read back in full.
EVIDENCE_CODES = {
    "eligibility": "E",
    "suppression_version": "V",
    "watermark_age_seconds": "W",
    "suppression_reason": "S",
    "recipient": "R",
    "decision": "D",
    "attempts": "A",
    PROVIDER_MESSAGE_ID: "M",
    "provider_request_id": "Q",
    "provider_result": "P",
    "provider_error": "X",
    "grace_seconds": "G",
    "stale_policy": "Y",
    "previous_send_age_seconds": "B",
    "sms_encoding": "C",
    "sms_segments": "N",
}
EVIDENCE_NAMES = {code: name for name, code in EVIDENCE_CODES.items()}
# A first entry's template: only the version's SHA-256 is stored (base64url, 43 characters), under
# "T"; its id, version, locale and owner are the message item's own attributes, read back with it.
TEMPLATE, TEMPLATE_CODE = "template", "T"
TEMPLATE_ID, TEMPLATE_VERSION = "template_id", "template_version"
TEMPLATE_LOCALE, TEMPLATE_OWNER = "template_locale", "template_owner"  # written only when not the default
TYPE_CODES = {
    HistoryType.INTENT: "i",
    HistoryType.PROVIDER_OUTCOME: "o",
    HistoryType.DECIDED: "d",
    HistoryType.ELIGIBILITY: "l",
}
TYPE_NAMES = {code: kind for kind, code in TYPE_CODES.items()}


def encoded(entry: HistoryEntry, derived_from: str | None = None, within: str | None = None) -> tuple[str, str]:
    """(attribute name, JSON value). `derived_from` makes the name deterministic (events).

    An act's key already holds its time and step, so only an event's entry stores them (`at`
    as epoch milliseconds). `within`: the provider message id the item is known to hold, so
    an event id that starts with it keeps only the rest, and the id itself is a flag.
    """
    body: dict[str, Any] = {TYPE: TYPE_CODES.get(entry.type, entry.type.value)}
    if entry.evidence:
        body[EVIDENCE] = {
            EVIDENCE_CODES.get(name, name): value
            for name, value in _compact_template(_relative(entry.evidence, within)).items()
        }
    if entry.state is not None:
        body[STATE] = entry.state.value
    if derived_from is not None:
        body[AT] = epoch_millis(entry.at)
        if entry.step:
            body[STEP] = entry.step
    name = history_attribute(entry_key(entry.at, entry.step, derived_from))
    return name, json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)


def epoch_millis(at: datetime) -> int:
    """Whole milliseconds, truncated as `iso` truncates (integer arithmetic: no float rounding)."""
    return (at.astimezone(UTC) - EPOCH) // timedelta(milliseconds=1)


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def label_attribute(intent_at: datetime) -> str:
    """The one eligibility label a message gets, keyed by its intent's millisecond: a stream record
    handled again finds it. Its lower-case suffix sorts it after the intent (whose random suffix is
    upper case) and before the outcome (step 1) when all three share a millisecond."""
    return history_attribute(f"{epoch_millis(intent_at):013d}.00.label")


def append_label(update: Update, entry: HistoryEntry) -> Update:
    return update.append_entry(label_attribute(entry.at), encoded(entry)[1])


def event_attribute(dedupe_key: str) -> str:
    """The attribute of a delivery event's entry: the same event always names the same one."""
    return history_attribute(entry_key(datetime.min, 0, derived_from=dedupe_key))


def append(update: Update, entry: HistoryEntry, derived_from: str | None = None, within: str | None = None) -> Update:
    return update.append_entry(*encoded(entry, derived_from, within))


def provider_message_id_of(item: Item) -> str | None:
    """The provider message id an item holds: its attribute, or an SMS receipt's key."""
    if "provider_message_id" in item:
        return str(item["provider_message_id"]["S"])
    if item.get("sk", {}).get("S") == RECEIPT_SK:
        return str(item["pk"]["S"]).removeprefix(RECEIPT_PK_PREFIX)
    return None


def _relative(evidence: dict[str, Any], within: str | None) -> dict[str, Any]:
    if within is None:
        return evidence
    found = dict(evidence)
    if found.get(PROVIDER_MESSAGE_ID) == within:
        found[PROVIDER_MESSAGE_ID] = True  # the item's own: a flag (an accepted send's id never changes)
    event_id = found.get(EVENT_ID)
    if isinstance(event_id, str) and event_id.startswith(f"{within}#"):
        del found[EVENT_ID]
        found[EVENT_REF] = event_id.removeprefix(f"{within}#")
    return found


def _compact_template(evidence: dict[str, Any]) -> dict[str, Any]:
    template = evidence.get(TEMPLATE)
    if not isinstance(template, dict) or "sha256" not in template:
        return evidence
    found = {name: value for name, value in evidence.items() if name != TEMPLATE}
    found[TEMPLATE_CODE] = base64.urlsafe_b64encode(bytes.fromhex(template["sha256"])).decode().rstrip("=")
    return found


def _template_of(digest: str, item: Item) -> dict[str, str]:
    """The first entry's template as recorded: the item's template and the stored hash, in hex."""
    found = {"id": item[TEMPLATE_ID]["S"], "version": item[TEMPLATE_VERSION]["S"]}
    for name, attribute in (("locale", TEMPLATE_LOCALE), ("owner", TEMPLATE_OWNER)):
        if attribute in item:
            found[name] = item[attribute]["S"]
    found["sha256"] = base64.urlsafe_b64decode(digest + "=").hex()
    return found


def _absolute(evidence: dict[str, Any], item: Item) -> dict[str, Any]:
    found = {EVIDENCE_NAMES.get(name, name): value for name, value in evidence.items()}
    if TEMPLATE_CODE in found:
        found[TEMPLATE] = _template_of(found.pop(TEMPLATE_CODE), item)
    if found.get(PROVIDER_MESSAGE_ID) is True:
        found[PROVIDER_MESSAGE_ID] = provider_message_id_of(item)
    if EVENT_REF in found:
        found[EVENT_ID] = f"{provider_message_id_of(item)}#{found.pop(EVENT_REF)}"
    return found


def entries_of(item: Item) -> list[tuple[str, HistoryEntry]]:
    """(entry key, entry) of every history attribute on a raw item."""
    found = []
    for name, value in item.items():
        if name.startswith(HISTORY_PREFIX):
            key, body = name.removeprefix(HISTORY_PREFIX), json.loads(value["S"])
            at, step = key_time(key) if AT not in body else (from_millis(body[AT]), int(body.get(STEP, 0)))
            entry = HistoryEntry(
                at=at,
                type=TYPE_NAMES.get(body[TYPE]) or HistoryType(body[TYPE]),
                state=MessageState(body[STATE]) if body.get(STATE) else None,
                evidence=_absolute(body.get(EVIDENCE, {}), item),
                step=step,
            )
            found.append((key, entry))
    return found


def key_time(key: str) -> tuple[datetime, int]:
    """(time, step) of an act's entry key `<epoch ms>.<step>.<random>`."""
    millis, step, _ = key.split(".", 2)
    return from_millis(int(millis)), int(step)


def in_order(pairs: list[tuple[str, HistoryEntry]]) -> list[HistoryEntry]:
    """Time order; within one millisecond the step (an intent before its outcome), then the key."""
    return [entry for _, entry in sorted(pairs, key=lambda pair: (pair[1].at, pair[1].step, pair[0]))]
