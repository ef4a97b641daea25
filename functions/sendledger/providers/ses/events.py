"""SES configuration-set event publishing records → delivery events, and what SES bounces mean.

Usually inside the topic's `Notification` envelope in an SQS body (`Message` is a JSON *string*);
raw delivery (the record itself as the body) and identity notifications (`notificationType`,
no tags) are accepted too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from email.utils import parseaddr
from typing import Any

from sendledger.domain.clock import parse_iso
from sendledger.domain.events import (
    Action,
    DeliveryEvent,
    EventKind,
    MalformedEvent,
    Verdict,
    escalates_flag,
    failure_reason,
    json_object,
    mapping,
    optional_text,
    required_text,
)
from sendledger.domain.recipients import fingerprint_of
from sendledger.providers.ses import ESCALATES_TAG, MESSAGE_ID_TAG, SOURCE

PERMANENT_SUBTYPES = frozenset({"General", "NoEmail", "Suppressed", "OnAccountSuppressionList"})

_SES_KINDS = {
    "Send": EventKind.SEND,
    "Delivery": EventKind.DELIVERY,
    "Bounce": EventKind.BOUNCE,
    "Complaint": EventKind.COMPLAINT,
    "Reject": EventKind.REJECT,
    "DeliveryDelay": EventKind.DELIVERY_DELAY,
}


def parse_sqs_body(body: str, topic_arn: str = "") -> list[DeliveryEvent]:
    """An SQS message body from the SES events queue → the events it carries (one per recipient).

    With `topic_arn` (deployed: the configuration set's topic), only a notification envelope from that
    topic is read: a record someone else put on the queue is refused, never applied (the queue's
    policy should already have kept it out; this holds where that policy was loosened).
    """
    document = json_object(body, "SQS body")
    if topic_arn and (document.get("Type") != "Notification" or document.get("TopicArn") != topic_arn):
        raise MalformedEvent(f"not an SNS notification of the SES events topic (TopicArn={document.get('TopicArn')!r})")
    if document.get("Type") == "Notification" and "Message" in document:
        message = document["Message"]
        if not isinstance(message, str):
            raise MalformedEvent("SNS envelope Message is not a string")
        document = json_object(message, "SNS Message")
    return parse_ses_record(document)


def parse_ses_record(record: Mapping[str, Any]) -> list[DeliveryEvent]:
    event_type = record.get("eventType") or record.get("notificationType")
    if not isinstance(event_type, str) or event_type not in _SES_KINDS:
        raise MalformedEvent(f"not an SES event record (eventType={event_type!r})")
    kind = _SES_KINDS[event_type]
    mail = mapping(record.get("mail"), "mail")
    ses_message_id = required_text(mail.get("messageId"), "mail.messageId")
    tags = mail.get("tags") or {}
    tag_values = tags.get(MESSAGE_ID_TAG) if isinstance(tags, Mapping) else None
    message_id = str(tag_values[0]) if isinstance(tag_values, list) and tag_values else None
    flag_values = tags.get(ESCALATES_TAG) if isinstance(tags, Mapping) else None
    escalates = escalates_flag(flag_values[0]) if isinstance(flag_values, list) and flag_values else None
    detail_key = event_type[0].lower() + event_type[1:]
    detail = record.get(detail_key) or {}
    if not isinstance(detail, Mapping):
        raise MalformedEvent(f"{detail_key} is not an object")
    occurred_at = _ses_time(detail.get("timestamp") or mail.get("timestamp"))
    feedback_id = detail.get("feedbackId")

    evidence: dict[str, Any] = {"provider_event": event_type}  # SES events carry no id of their own
    bounce_type = bounce_subtype = None
    if kind is EventKind.BOUNCE:
        bounce_type = str(detail.get("bounceType") or "Undetermined")
        bounce_subtype = str(detail.get("bounceSubType") or "Undetermined")
        evidence.update(bounce_type=bounce_type, bounce_subtype=bounce_subtype)
    elif kind is EventKind.COMPLAINT and detail.get("complaintFeedbackType"):
        evidence["complaint_feedback_type"] = str(detail["complaintFeedbackType"])
    elif kind is EventKind.REJECT and detail.get("reason"):
        evidence["reject_reason"] = str(detail["reason"])
    elif kind is EventKind.DELIVERY_DELAY and detail.get("delayType"):
        evidence["delay_type"] = str(detail["delayType"])

    events = []
    for address, status in _ses_recipients(kind, mail, detail):
        key = f"email:{address.lower()}" if address else None
        parts = [ses_message_id, event_type, fingerprint_of(key) if key else "-"]
        if isinstance(feedback_id, str) and feedback_id:
            parts.append(feedback_id)
        per_recipient = dict(evidence)
        if status:
            per_recipient["smtp_status"] = status  # e.g. 5.1.1; diagnosticCode may quote addresses
        events.append(
            DeliveryEvent(
                source=SOURCE,
                event_id="#".join(parts),
                kind=kind,
                occurred_at=occurred_at,
                recipient_key=key,
                message_id=message_id,
                provider_message_id=ses_message_id,
                bounce_type=bounce_type,
                bounce_subtype=bounce_subtype,
                provider_response=status,
                escalates=escalates,
                evidence=per_recipient,
                verdict=_verdict(detail, status) if kind is EventKind.BOUNCE else None,
            )
        )
    return events


def classify_bounce(bounce_type: str | None, bounce_subtype: str | None, smtp_status: str | None) -> Verdict:
    reason = failure_reason(EventKind.BOUNCE, f"{bounce_type}/{bounce_subtype}")
    if bounce_type == "Permanent":
        # RFC 3463 5.2.2 (mailbox full) reported as permanent is best treated as transient.
        if smtp_status == "5.2.2":
            return Verdict(Action.COUNT_TRANSIENT, reason)
        return Verdict(Action.SUPPRESS, reason, known=bounce_subtype in PERMANENT_SUBTYPES)
    if bounce_type == "Transient":
        return Verdict(Action.COUNT_TRANSIENT, reason)
    if bounce_type == "Undetermined":
        # Documented: SES could not tell why the mail bounced (subtype Undetermined too).
        return Verdict(Action.COUNT_TRANSIENT, reason, known=bounce_subtype == "Undetermined")
    return Verdict(Action.COUNT_TRANSIENT, reason, known=False)


def _verdict(detail: Mapping[str, Any], smtp_status: str | None) -> Verdict:
    # From the record as sent: a missing bounce type is an unknown outcome, not a documented
    # Undetermined one (the evidence shows it as Undetermined all the same).
    bounce_type, subtype = detail.get("bounceType"), detail.get("bounceSubType")
    return classify_bounce(str(bounce_type) if bounce_type else None, str(subtype) if subtype else None, smtp_status)


Recipients = list[tuple[str, str | None]]


def _ses_recipients(kind: EventKind, mail: Mapping[str, Any], detail: Mapping[str, Any]) -> Recipients:
    listed: Recipients = []
    if kind is EventKind.BOUNCE:
        for item in detail.get("bouncedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((address_of(item["emailAddress"]), optional_text(item.get("status"))))
    elif kind is EventKind.COMPLAINT:
        for item in detail.get("complainedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((address_of(item["emailAddress"]), None))
    elif kind is EventKind.DELIVERY:
        listed = [(address_of(item), None) for item in detail.get("recipients") or [] if isinstance(item, str)]
    elif kind is EventKind.DELIVERY_DELAY:
        for item in detail.get("delayedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((address_of(item["emailAddress"]), optional_text(item.get("status"))))
    if not listed:
        listed = [(address_of(item), None) for item in mail.get("destination") or [] if isinstance(item, str)]
    return listed or [("", None)]


# No whitespace and none of RFC 5322's specials but the one "@": the address parses to itself.
_BARE_ADDRESS = re.compile(r"[^\s()<>\[\]:;@\\,.\"]+(?:\.[^\s()<>\[\]:;@\\,.\"]+)*@[^\s()<>\[\]:;@\\,\"]+")


def address_of(raw: str) -> str:
    """The address in an SES recipient field: SES lists bare addresses, which skip the full parser."""
    if _BARE_ADDRESS.fullmatch(raw):
        return raw
    return parseaddr(raw)[1] or raw.strip()


def _ses_time(raw: Any) -> datetime:
    if not isinstance(raw, str):
        raise MalformedEvent("event has no timestamp")
    try:
        return parse_iso(raw)
    except ValueError as exc:
        raise MalformedEvent(f"bad timestamp {raw!r}") from exc
