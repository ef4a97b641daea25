"""The message item as stored: the message, its key's idempotency record and stored answer.

What is written once (the intent) and what a replay reads back, kept apart from the writes
that move the message (messages.py).
"""

from __future__ import annotations

import base64
import json
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

from sendledger import names
from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import Item, decode, encode_item
from sendledger.adapters.dynamodb.keys import (
    ESCALATION_SK,
    MESSAGE_PK_PREFIX,
    MESSAGE_SK,
    due_shard,
    evidence_partition,
    message_pk,
)
from sendledger.adapters.dynamodb.states import DUE_AT, DUE_KIND, STATE
from sendledger.domain import test_mode
from sendledger.domain.clock import iso, parse_iso
from sendledger.domain.escalation import Escalation
from sendledger.domain.messages import DEFAULT_CATEGORY, DueKind, Message, MessageState, Template
from sendledger.domain.provider import carriers
from sendledger.domain.recipients import Channel, Recipient
from sendledger.domain.sms_segments import SmsEncoding, SmsSegments
from sendledger.domain.template_versions import TemplateOwner
from sendledger.ports.messages import IdempotencyRecord, SendIntent, StoredResponse

RESPONSE = "response"
SMS = "sms"  # an SMS's `<encoding>:<segments>:<units>` (GSM-7:1:42): what the publisher counts
TEST = "test"  # a test caller's message (domain/test_mode.py)
TEMPLATE_LOCALE, TEMPLATE_OWNER = history.TEMPLATE_LOCALE, history.TEMPLATE_OWNER
BUSINESS_EVENT_ID = "business_event_id"  # only on a message whose request named its event
# The stored answer's fields, one letter each: every send's item carries it (billed by the KB).
# Its time is milliseconds after the message's creation ("d"); items from before kept it whole ("u").
ANSWER_STATE, ANSWER_UPDATED_AT, ANSWER_AFTER, ANSWER_REASON, ANSWER_PROVIDER_ID = "s", "u", "d", "r", "p"
EVIDENCE_DAY = names.EVIDENCE_INDEX_PARTITION_KEY
# Params as JSON, or deflated (raw DEFLATE, no header) when that is smaller: a send's intent is
# billed 2 write units per started KB, and long params are what crosses the boundary.
PARAMS, PARAMS_DEFLATED = "params", "params_z"
DEFLATE_FROM = 96  # bytes of JSON below which deflating never pays

# A message item without `provider` was carried by its channel's first provider in the registry
# (the only ones before providers were selectable): a storage convention, not a default of today's.
IMPLIED_PROVIDER = {channel: carriers(channel)[0].value for channel in Channel}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def message_item(intent: SendIntent, stored: StoredResponse | None) -> Item:
    message = intent.message
    due = intent.due
    if due is None and message.state is MessageState.SENDING:
        # In flight until the outcome write; if we crash, the poller finds it here after the lease.
        due = (DueKind.INFLIGHT, intent.lease_until)
    values: dict[str, Any] = {
        "pk": message_pk(message.message_id),
        "sk": MESSAGE_SK,
        **message_fields(message),
        STATE: message.state.value,
        "updated_at": iso(message.updated_at),
        "reason": message.reason,
        "reset_account_id": message.reset_account_id,
        **params_fields(message.params),
        "attempt": message.attempt if message.attempt != 1 else None,
        "parent_key": message.parent_key,
        BUSINESS_EVENT_ID: message.business_event_id,
    }
    if message.owner:
        # The owner is the evidence partition's first part: the item does not carry it twice.
        values[EVIDENCE_DAY] = evidence_partition(message.owner, message.created_at, message.message_id)
    if due is not None:
        values[DUE_KIND] = due_shard(due[0].value, message.message_id)
        values[DUE_AT] = int(due[1].timestamp())
    if intent.idempotency_key is not None:
        assert intent.fingerprint is not None and intent.idempotency_expires_at is not None
        values.update(
            idem_key=intent.idempotency_key,
            idem_fingerprint=intent.fingerprint,
            idem_expires_at=int(intent.idempotency_expires_at.timestamp()),
        )
        if stored is not None:
            values[RESPONSE] = answer(stored, None)
        else:
            values["lease_until"] = iso(intent.lease_until)
    name, entry = history.encoded(intent.first_entry)
    values[name] = entry
    return encode_item(values)


def message_fields(message: Message) -> dict[str, Any]:
    """What the message item and its escalation timer both carry.

    Not the message id (the key holds it) nor the recipient key (derived from channel and
    address): a replay is billed by the item's size, in 1 KB units.
    """
    return {
        "channel": message.channel.value,
        "recipient": message.to,
        history.TEMPLATE_ID: message.template.id,
        history.TEMPLATE_VERSION: message.template.version,
        # Only when not the default: a deployment template's send keeps its item size.
        TEMPLATE_LOCALE: message.template.locale,
        TEMPLATE_OWNER: message.template.owner.value if message.template.owner is TemplateOwner.CALLER else None,
        "category": message.category if message.category != DEFAULT_CATEGORY else None,
        "created_at": iso(message.created_at),
        "escalation": json.dumps(message.escalation.as_json(), separators=(",", ":")) if message.escalation else None,
        # Written only when it is not the channel's first provider: the default path keeps its
        # item size, and items from before provider selection read back right.
        "provider": None if message.provider == IMPLIED_PROVIDER[message.channel] else message.provider,
        # Only when true: a real caller's item stays the size the capacity bars were measured at.
        TEST: True if message.test else None,
        SMS: sms_field(message.sms),
    }


def sms_field(sms: SmsSegments | None) -> str | None:
    return f"{sms.encoding.value}:{sms.segments}:{sms.units}" if sms else None


def sms_from(raw: str | None) -> SmsSegments | None:
    if not raw:
        return None
    encoding, segments, units = raw.rsplit(":", 2)
    return SmsSegments(encoding=SmsEncoding(encoding), units=int(units), segments=int(segments))


def params_fields(params: dict[str, str] | None) -> dict[str, Any]:
    if params is None:
        return {}
    text = json.dumps(params, separators=(",", ":"))
    if len(text) >= DEFLATE_FROM:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        packed = packer.compress(text.encode()) + packer.flush()
        if len(packed) < len(text.encode()):
            return {PARAMS_DEFLATED: packed}
    return {PARAMS: text}


def params_from(item: Item) -> dict[str, str] | None:
    if PARAMS_DEFLATED in item:
        raw = item[PARAMS_DEFLATED]["B"]
        # A stream record (Lambda's JSON) carries a binary value base64-encoded; the SDK, as bytes.
        packed = base64.b64decode(raw) if isinstance(raw, str) else bytes(raw)
        loaded: dict[str, str] = json.loads(zlib.decompress(packed, -15))
        return loaded
    text = item.get(PARAMS, {}).get("S")
    return json.loads(text) if text else None


def escalation_item(message: Message) -> Item:
    assert message.escalation is not None
    deadline = message.created_at + timedelta(seconds=message.escalation.deadline_seconds)
    return encode_item(
        {
            "pk": message_pk(message.message_id),
            "sk": ESCALATION_SK,
            **message_fields(message),
            STATE: "scheduled",
            "updated_at": iso(message.created_at),
            DUE_KIND: due_shard(DueKind.ESCALATION.value, message.message_id),
            DUE_AT: int(deadline.timestamp()),
        }
    )


def message_from(item: Item) -> Message:
    values = {name: decode(value) for name, value in item.items() if not name.startswith("h:")}
    channel = Channel(values["channel"])
    owner = values.get("owner") or _owner_of(values.get(EVIDENCE_DAY))
    test = bool(values.get(TEST))
    key = Recipient(channel, values["recipient"]).key
    return Message(
        message_id=message_id_of(item),
        channel=channel,
        to=values["recipient"],
        template=Template(
            values["template_id"],
            values["template_version"],
            locale=values.get(TEMPLATE_LOCALE),
            owner=TemplateOwner(values.get(TEMPLATE_OWNER) or TemplateOwner.DEPLOYMENT),
        ),
        state=MessageState(values[STATE]),
        category=values.get("category") or DEFAULT_CATEGORY,
        created_at=parse_iso(values["created_at"]),
        updated_at=parse_iso(values["updated_at"]),
        # Not stored: derived from the address, and for a test caller's message from its owner too.
        recipient_key=test_mode.recipient_key(owner or "", key) if test else key,
        provider_message_id=values.get("provider_message_id"),
        provider=values.get("provider") or IMPLIED_PROVIDER[channel],
        reason=values.get("reason"),
        reset_account_id=values.get("reset_account_id"),
        params=params_from(item),
        escalation=Escalation.from_json(json.loads(values["escalation"])) if values.get("escalation") else None,
        attempt=int(values.get("attempt", 1)),
        parent_key=values.get("parent_key"),
        owner=owner,
        business_event_id=values.get(BUSINESS_EVENT_ID),
        test=test,
        sms=sms_from(values.get(SMS)),
    )


def _owner_of(partition: str | None) -> str | None:
    """The caller a message's evidence partition (`<owner>#<day>[#<shard>]`) names."""
    return partition.split("#", 1)[0] if partition else None


def message_id_of(item: Item) -> str:
    """The id of the message a `MSG#<message id>` item belongs to."""
    return str(item["pk"]["S"]).removeprefix(MESSAGE_PK_PREFIX)


def answer(stored: StoredResponse, item_provider_message_id: str | None) -> str:
    """What changes after an answer, as it was (the rest of the answer never changes)."""
    message = stored.message
    # In the views' whole milliseconds (iso), so the replay renders the first answer's updated_at.
    after = _whole_ms(message.updated_at) - _whole_ms(message.created_at)
    answer: dict[str, Any] = {ANSWER_STATE: message.state.value, ANSWER_AFTER: after}
    if message.reason:
        answer[ANSWER_REASON] = message.reason
    if message.provider_message_id:
        # Only an outcome sets the item's provider id, and it rewrites the answer: when the item
        # holds the same id, a flag suffices.
        same = message.provider_message_id == item_provider_message_id
        answer[ANSWER_PROVIDER_ID] = True if same else message.provider_message_id
    return json.dumps(answer, separators=(",", ":"))


def _whole_ms(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def answered_from(item: Item, answer: str) -> StoredResponse:
    values = json.loads(answer)
    message = message_from(item)
    message.state = MessageState(values[ANSWER_STATE])
    if ANSWER_AFTER in values:
        message.updated_at = message.created_at + timedelta(milliseconds=int(values[ANSWER_AFTER]))
    else:
        message.updated_at = parse_iso(values[ANSWER_UPDATED_AT])
    message.reason = values.get(ANSWER_REASON)
    answered_id = values.get(ANSWER_PROVIDER_ID)
    message.provider_message_id = (
        answered_id if isinstance(answered_id, str) else (message.provider_message_id if answered_id else None)
    )
    return StoredResponse(message)


def record_from(item: Item | None) -> IdempotencyRecord | None:
    if not item or "idem_key" not in item:
        return None
    values = {name: decode(value) for name, value in item.items() if not name.startswith("h:")}
    response = values.get(RESPONSE)
    lease = values.get("lease_until")
    return IdempotencyRecord(
        key=values["idem_key"],
        fingerprint=values["idem_fingerprint"],
        message_id=message_id_of(item),
        completed=response is not None,
        lease_until=parse_iso(lease) if lease else parse_iso(values["created_at"]),
        expires_at=datetime.fromtimestamp(int(values["idem_expires_at"]), tz=UTC),
        response=answered_from(item, response) if response else None,
    )
