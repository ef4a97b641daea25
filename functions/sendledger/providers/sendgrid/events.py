"""SendGrid Event Webhook events → the one DeliveryEvent type (pure; no HTTP, no crypto).

A webhook POST is a JSON array of events, each a flat object: `event`, `email`, `timestamp`
(Unix seconds), `sg_event_id` (the dedupe key SendGrid documents), `sg_message_id`, and every
custom argument of the send copied to the top level: `sendledger_message_id` names our message.
Engagement events (open, click, unsubscribe, group_*) prove nothing about delivery and are
skipped. Unknown keys are ignored: SendGrid adds fields over time.

Raw addresses never reach an event id or `evidence` (bounce `reason` texts may quote them, so
only the SMTP `status`, SendGrid's `bounce_classification` and the fixed drop reasons are kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sendledger.domain.events import (
    Action,
    DeliveryEvent,
    EventKind,
    MalformedEvent,
    Verdict,
    escalates_flag,
    failure_reason,
    normalised,
)
from sendledger.providers.sendgrid import SOURCE

MESSAGE_ID_ARG = "sendledger_message_id"  # custom_args key set by the SendGrid adapter
CATEGORY = "sendledger"  # the send's category, back on every event as `category`
ESCALATES_ARG = "sendledger_escalates"  # custom_args: "1" when the message has an escalation, else "0"
SIGNATURE_HEADER = "X-Twilio-Email-Event-Webhook-Signature"
TIMESTAMP_HEADER = "X-Twilio-Email-Event-Webhook-Timestamp"

_KINDS = {
    "processed": EventKind.SEND,
    "deferred": EventKind.DELIVERY_DELAY,
    "delivered": EventKind.DELIVERY,
    "bounce": EventKind.BOUNCE,
    "dropped": EventKind.REJECT,  # SendGrid never tried: refused for good
    "spamreport": EventKind.COMPLAINT,
}
ENGAGEMENT = frozenset({"open", "click", "unsubscribe", "group_unsubscribe", "group_resubscribe"})
MAX_EVENT_ID = 100  # sg_event_id is at most 100 characters (base64url)


def parse_batch(body: bytes | str) -> list[dict[str, Any]]:
    """A webhook body → its event objects (not yet interpreted). MalformedEvent when not an array of objects."""
    try:
        document = json.loads(body)
    except (TypeError, ValueError, RecursionError) as exc:
        raise MalformedEvent("SendGrid webhook body is not JSON") from exc
    if not isinstance(document, list) or not all(isinstance(item, dict) for item in document):
        raise MalformedEvent("SendGrid webhook body is not a JSON array of objects")
    return document


def parse_event(record: Mapping[str, Any]) -> DeliveryEvent | None:
    """One webhook event → a DeliveryEvent; None for events that prove nothing (engagement, unknown)."""
    name = record.get("event")
    if not isinstance(name, str):
        raise MalformedEvent("SendGrid event has no `event`")
    kind = _KINDS.get(name)
    if kind is None:
        return None  # engagement or a type we do not know: nothing to apply
    event_id = record.get("sg_event_id")
    if not isinstance(event_id, str) or not event_id or len(event_id) > MAX_EVENT_ID:
        raise MalformedEvent("SendGrid event has no usable sg_event_id")
    address = record.get("email")
    if not isinstance(address, str) or "@" not in address:
        raise MalformedEvent("SendGrid event has no recipient `email`")
    evidence: dict[str, Any] = {"provider_event": name}  # its id, sg_event_id, is the dedupe id
    bounce_type = bounce_subtype = None
    status = _text(record.get("status"))
    if kind is EventKind.BOUNCE:
        # `type` bounce: refused for this address; `blocked`: refused for the message or the IP.
        bounce_type = "Permanent" if record.get("type", "bounce") == "bounce" else "Transient"
        bounce_subtype = _text(record.get("type")) or "bounce"
        evidence.update(bounce_type=bounce_type, bounce_subtype=bounce_subtype)
        if _text(record.get("bounce_classification")):
            evidence["bounce_classification"] = _text(record.get("bounce_classification"))
    elif kind is EventKind.REJECT and _text(record.get("reason")):
        evidence["drop_reason"] = _text(record.get("reason"))  # a fixed SendGrid phrase
    elif kind is EventKind.DELIVERY_DELAY and _text(record.get("attempt")):
        evidence["attempt"] = _text(record.get("attempt"))
    if status:
        evidence["smtp_status"] = status
    sg_message_id = _text(record.get("sg_message_id"))
    message_id = _text(record.get(MESSAGE_ID_ARG))
    return DeliveryEvent(
        source=SOURCE,
        event_id=event_id,
        kind=kind,
        occurred_at=_time(record.get("timestamp")),
        recipient_key=f"email:{address.strip().lower()}",
        message_id=message_id,
        provider_message_id=sg_message_id,
        bounce_type=bounce_type,
        bounce_subtype=bounce_subtype,
        provider_response=status,
        evidence=evidence,
        escalates=escalates_flag(record.get(ESCALATES_ARG)),
        verdict=classify(kind, bounce_type, bounce_subtype, status, evidence),
    )


# `dropped` reasons that say the address cannot or must not receive mail (SendGrid keeps dropping
# it); the others are about the message (content, headers, plan quota).
SUPPRESSING_DROPS = frozenset(
    normalised(text) for text in ("Bounced Address", "Invalid", "Spam Reporting Address", "Unsubscribed Address")
)
MESSAGE_DROPS = frozenset(
    normalised(text) for text in ("Invalid SMTPAPI header", "Spam Content", "Recipient List over Package Quota")
)


def classify(
    kind: EventKind, bounce_type: str | None, bounce_subtype: str | None, status: str | None, evidence: dict[str, Any]
) -> Verdict | None:
    """Bounces (`type` bounce or blocked) and drops; None for the kinds every provider reads alike."""
    if kind is EventKind.BOUNCE:
        classification = evidence.get("bounce_classification")
        detail = f"sendgrid/{bounce_subtype}" + (f" ({classification})" if classification else "")
        reason = failure_reason(kind, detail)
        if bounce_type == "Permanent" and status != "5.2.2":
            return Verdict(Action.SUPPRESS, reason)
        # `blocked` refuses the message or the sending IP, not the address; a full mailbox is transient.
        return Verdict(Action.COUNT_TRANSIENT, reason, known=bounce_subtype in ("bounce", "blocked"))
    if kind is EventKind.REJECT:
        drop = str(evidence.get("drop_reason") or "")
        reason = f"dropped: {drop}" if drop else "dropped"
        if normalised(drop) in SUPPRESSING_DROPS:
            return Verdict(Action.SUPPRESS, reason)
        return Verdict(Action.NONE, reason, known=normalised(drop) in MESSAGE_DROPS)
    return None


def parse_queued(body: str) -> list[DeliveryEvent]:
    """One queued event (the webhook queues each verified event as its own JSON object); [] for
    one that proves nothing."""
    try:
        record = json.loads(body)
    except (TypeError, ValueError, RecursionError) as exc:
        raise MalformedEvent("queued SendGrid event is not JSON") from exc
    if not isinstance(record, dict):
        raise MalformedEvent("queued SendGrid event is not a JSON object")
    event = parse_event(record)
    return [event] if event is not None else []


def x_message_id(sg_message_id: str | None) -> str | None:
    """The send's X-Message-Id: the per-recipient Message ID up to its first dot."""
    return sg_message_id.split(".", 1)[0] if sg_message_id else None


def _time(raw: Any) -> datetime:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise MalformedEvent("SendGrid event has no numeric timestamp")
    try:
        return datetime.fromtimestamp(raw, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise MalformedEvent(f"bad SendGrid timestamp {raw!r}") from exc


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") and not isinstance(value, dict | list) else None
