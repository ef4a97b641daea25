"""Delivery events: one normalised type for every source, and the pure parsers that build it.

Sources:
- SES configuration-set event publishing records, usually inside an SNS `Notification`
  envelope in an SQS body (`Message` is a JSON *string*); raw delivery (the record itself as
  the body) and identity notifications (`notificationType`, no tags) are accepted too.
- SNS SMS delivery-status log records, one CloudWatch Logs event message each, arriving through
  a subscription filter (base64 + gzip envelope) or read back with FilterLogEvents.

No boto3 here: parsing is pure so it can be tested against the AWS-documented samples alone.
Raw recipient addresses never leave this module in an event id or in `evidence`: recipients
travel as the canonical key (for suppression) and as its fingerprint (for ids and logs).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parseaddr
from enum import StrEnum
from typing import Any

from sendledger import names
from sendledger.domain.clock import parse_iso
from sendledger.domain.recipients import fingerprint_of


class MalformedEvent(ValueError):
    """The payload is not a delivery event we can read (poison: leave it for the DLQ)."""


class EventSource(StrEnum):
    SES = "ses"
    SMS = "sms"
    MAILGUN = "mailgun"
    SENDGRID = "sendgrid"  # Signed Event Webhook (domain/sendgrid_events.py)


class EventKind(StrEnum):
    SEND = "Send"
    DELIVERY = "Delivery"
    BOUNCE = "Bounce"
    COMPLAINT = "Complaint"
    REJECT = "Reject"
    DELIVERY_DELAY = "DeliveryDelay"
    SMS_SUCCESS = "SmsSuccess"
    SMS_FAILURE = "SmsFailure"
    UNSUBSCRIBE = "Unsubscribe"  # the recipient opted out (Mailgun `unsubscribed`)


_SES_KINDS = {
    "Send": EventKind.SEND,
    "Delivery": EventKind.DELIVERY,
    "Bounce": EventKind.BOUNCE,
    "Complaint": EventKind.COMPLAINT,
    "Reject": EventKind.REJECT,
    "DeliveryDelay": EventKind.DELIVERY_DELAY,
}


@dataclass(frozen=True)
class DeliveryEvent:
    source: EventSource
    event_id: str  # deduplication key, unique per source; no raw address inside
    kind: EventKind
    occurred_at: datetime  # when the provider says it happened (event age / lag are measured from it)
    recipient_key: str | None  # `email:<address>` / `sms:+E164`: what suppression is keyed by
    message_id: str | None = None  # sendledger message id (SES tag); None → resolve by provider id
    provider_message_id: str | None = None  # SES mail.messageId / SNS notification.messageId
    bounce_type: str | None = None
    bounce_subtype: str | None = None
    provider_response: str | None = None  # SMS providerResponse, SES smtp status (no diagnostics)
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def recipient_fingerprint(self) -> str | None:
        return fingerprint_of(self.recipient_key) if self.recipient_key else None

    @property
    def dedupe_key(self) -> str:
        return f"EVT#{self.source.value}#{self.event_id}"


# --- SES -----------------------------------------------------------------------------------------


def parse_sqs_body(body: str) -> list[DeliveryEvent]:
    """An SQS message body from the SES events queue → the events it carries (one per recipient)."""
    document = _json_object(body, "SQS body")
    if document.get("Type") == "Notification" and "Message" in document:
        message = document["Message"]
        if not isinstance(message, str):
            raise MalformedEvent("SNS envelope Message is not a string")
        document = _json_object(message, "SNS Message")
    return parse_ses_record(document)


def parse_ses_record(record: Mapping[str, Any]) -> list[DeliveryEvent]:
    event_type = record.get("eventType") or record.get("notificationType")
    if not isinstance(event_type, str) or event_type not in _SES_KINDS:
        raise MalformedEvent(f"not an SES event record (eventType={event_type!r})")
    kind = _SES_KINDS[event_type]
    mail = _mapping(record.get("mail"), "mail")
    ses_message_id = _text(mail.get("messageId"), "mail.messageId")
    tags = mail.get("tags") or {}
    tag_values = tags.get(names.SES_MESSAGE_ID_TAG) if isinstance(tags, Mapping) else None
    message_id = str(tag_values[0]) if isinstance(tag_values, list) and tag_values else None
    detail_key = event_type[0].lower() + event_type[1:]
    detail = record.get(detail_key) or {}
    if not isinstance(detail, Mapping):
        raise MalformedEvent(f"{detail_key} is not an object")
    occurred_at = _ses_time(detail.get("timestamp") or mail.get("timestamp"))
    feedback_id = detail.get("feedbackId")

    evidence: dict[str, Any] = {"ses_event_type": event_type}
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
                source=EventSource.SES,
                event_id="#".join(parts),
                kind=kind,
                occurred_at=occurred_at,
                recipient_key=key,
                message_id=message_id,
                provider_message_id=ses_message_id,
                bounce_type=bounce_type,
                bounce_subtype=bounce_subtype,
                provider_response=status,
                evidence=per_recipient,
            )
        )
    return events


Recipients = list[tuple[str, str | None]]


def _ses_recipients(kind: EventKind, mail: Mapping[str, Any], detail: Mapping[str, Any]) -> Recipients:
    listed: Recipients = []
    if kind is EventKind.BOUNCE:
        for item in detail.get("bouncedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((_address(item["emailAddress"]), _opt_text(item.get("status"))))
    elif kind is EventKind.COMPLAINT:
        for item in detail.get("complainedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((_address(item["emailAddress"]), None))
    elif kind is EventKind.DELIVERY:
        listed = [(_address(item), None) for item in detail.get("recipients") or [] if isinstance(item, str)]
    elif kind is EventKind.DELIVERY_DELAY:
        for item in detail.get("delayedRecipients") or []:
            if isinstance(item, Mapping) and item.get("emailAddress"):
                listed.append((_address(item["emailAddress"]), _opt_text(item.get("status"))))
    if not listed:
        listed = [(_address(item), None) for item in mail.get("destination") or [] if isinstance(item, str)]
    return listed or [("", None)]


def _address(raw: str) -> str:
    return parseaddr(raw)[1] or raw.strip()


def _ses_time(raw: Any) -> datetime:
    if not isinstance(raw, str):
        raise MalformedEvent("event has no timestamp")
    try:
        return parse_iso(raw)
    except ValueError as exc:
        raise MalformedEvent(f"bad timestamp {raw!r}") from exc


# --- SNS SMS delivery-status logs -------------------------------------------------------------


def parse_sms_record(message: str) -> DeliveryEvent:
    """One SNS SMS delivery-status log record (the CloudWatch Logs event `message`)."""
    record = _json_object(message, "SMS delivery-status record")
    notification = _mapping(record.get("notification"), "notification")
    delivery = _mapping(record.get("delivery"), "delivery")
    provider_message_id = _text(notification.get("messageId"), "notification.messageId")
    status = _text(record.get("status"), "status").upper()
    if status not in ("SUCCESS", "FAILURE"):
        raise MalformedEvent(f"unknown SMS status {status!r}")
    destination = _text(delivery.get("destination"), "delivery.destination")
    response = _opt_text(delivery.get("providerResponse"))
    key = f"sms:{destination.lower()}"
    evidence: dict[str, Any] = {"sms_status": status, "provider_response": response}
    for name in ("smsType", "dwellTimeMs", "priceInUSD"):
        if name in delivery:
            evidence[name] = delivery[name]
    return DeliveryEvent(
        source=EventSource.SMS,
        # One status record per SNS message id: the same id whether read from the subscription
        # or from FilterLogEvents, so both paths deduplicate against each other.
        event_id=f"{provider_message_id}#{status}",
        kind=EventKind.SMS_SUCCESS if status == "SUCCESS" else EventKind.SMS_FAILURE,
        occurred_at=_sms_time(notification.get("timestamp")),
        recipient_key=key,
        provider_message_id=provider_message_id,
        provider_response=response,
        evidence=evidence,
    )


def _sms_time(raw: Any) -> datetime:
    if not isinstance(raw, str):
        raise MalformedEvent("SMS record has no notification.timestamp")
    try:
        # "2026-11-29 10:00:05.120": no zone, UTC by definition.
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MalformedEvent(f"bad SMS timestamp {raw!r}") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass(frozen=True)
class LogRecord:
    log_event_id: str  # numeric string in AWS, an int in moto's subscription events
    timestamp_ms: int
    message: str


@dataclass(frozen=True)
class LogBatch:
    control: bool
    log_group: str
    records: list[LogRecord]


def decode_subscription_event(event: Mapping[str, Any]) -> LogBatch:
    """The Lambda event of a CloudWatch Logs subscription filter (awslogs.data: base64 gzip JSON)."""
    awslogs = _mapping(event.get("awslogs"), "awslogs")
    data = _text(awslogs.get("data"), "awslogs.data")
    try:
        decoded = gzip.decompress(base64.b64decode(data, validate=True))
    except (binascii.Error, OSError, EOFError) as exc:
        raise MalformedEvent("awslogs.data is not base64 gzip") from exc
    document = _json_object(decoded.decode("utf-8", errors="replace"), "awslogs payload")
    control = document.get("messageType") == "CONTROL_MESSAGE"
    records = []
    if not control:
        for item in document.get("logEvents") or []:
            if not isinstance(item, Mapping):
                continue
            records.append(
                LogRecord(str(item.get("id", "")), int(item.get("timestamp") or 0), str(item.get("message", "")))
            )
    return LogBatch(control=control, log_group=str(document.get("logGroup", "")), records=records)


def encode_subscription_event(document: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of decode_subscription_event (the local stack and tests deliver with it)."""
    data = base64.b64encode(gzip.compress(json.dumps(document).encode())).decode()
    return {"awslogs": {"data": data}}


# --- helpers ---------------------------------------------------------------------------------


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise MalformedEvent(f"{what} is not JSON") from exc
    if not isinstance(value, dict):
        raise MalformedEvent(f"{what} is not a JSON object")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedEvent(f"{what} missing or not an object")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedEvent(f"{what} missing")
    return value


def _opt_text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
