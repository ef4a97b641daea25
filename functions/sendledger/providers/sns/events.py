"""SNS SMS delivery-status log records → delivery events, what SNS's failure strings mean, and
the CloudWatch Logs subscription envelope (base64 + gzip) they arrive in; FilterLogEvents reads
them back bare.

A failure whose providerResponse says the number cannot receive (invalid, opted out, blocked)
suppresses at once; every other failure (and any string not listed here, which is logged) is
transient: the message ends `failed`, the number stays sendable.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from sendledger.domain.events import (
    Action,
    DeliveryEvent,
    EventKind,
    MalformedEvent,
    Verdict,
    failure_reason,
    json_object,
    mapping,
    normalised,
    optional_text,
    required_text,
)
from sendledger.domain.values import value
from sendledger.ports.log_subscription import LogBatch, LogRecord
from sendledger.providers.sns import SOURCE

# Documented SNS providerResponse strings that mean "this number cannot receive": both the
# current wording and the older "blacklisted" spellings.
PERMANENT = frozenset(
    normalised(text)
    for text in (
        "Invalid phone number",
        "Phone number is opted out",
        "Phone has blocked SMS",
        "Phone is on a blocked list",
        "Phone is blacklisted",
        "Destination is on a blocked list",
        "Destination is blacklisted",
    )
)
TRANSIENT = frozenset(
    normalised(text)
    for text in (
        "Blocked as spam by phone carrier",
        "Message body is invalid",
        "Phone carrier has blocked this message",
        "Phone carrier is currently unreachable/unavailable",
        "Phone is currently unreachable/unavailable",
        "This delivery would exceed max price",
        "Unknown error attempting to reach phone",
    )
)


def classify_failure(provider_response: str | None) -> Verdict:
    text = normalised(provider_response or "")
    reason = failure_reason(EventKind.SMS_FAILURE, provider_response or "failure")
    if text in PERMANENT:
        return Verdict(Action.SUPPRESS, reason)
    return Verdict(Action.NONE, reason, known=text in TRANSIENT)


def parse_sms_record(message: str) -> DeliveryEvent:
    """One SNS SMS delivery-status log record (the CloudWatch Logs event `message`)."""
    record = json_object(message, "SMS delivery-status record")
    notification = mapping(record.get("notification"), "notification")
    delivery = mapping(record.get("delivery"), "delivery")
    provider_message_id = required_text(notification.get("messageId"), "notification.messageId")
    status = required_text(record.get("status"), "status").upper()
    if status not in ("SUCCESS", "FAILURE"):
        raise MalformedEvent(f"unknown SMS status {status!r}")
    destination = required_text(delivery.get("destination"), "delivery.destination")
    response = optional_text(delivery.get("providerResponse"))
    key = f"sms:{destination.lower()}"
    evidence: dict[str, Any] = {"provider_event": status, "provider_response": response}  # one record per message id
    for name in ("smsType", "dwellTimeMs", "priceInUSD"):
        if name in delivery:
            evidence[name] = delivery[name]
    return DeliveryEvent(
        source=SOURCE,
        # One status record per SNS message id: the same id whether read from the subscription
        # or from FilterLogEvents, so both paths deduplicate against each other.
        event_id=f"{provider_message_id}#{status}",
        kind=EventKind.SMS_SUCCESS if status == "SUCCESS" else EventKind.SMS_FAILURE,
        occurred_at=_sms_time(notification.get("timestamp")),
        recipient_key=key,
        provider_message_id=provider_message_id,
        provider_response=response,
        evidence=evidence,
        verdict=classify_failure(response) if status == "FAILURE" else None,
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


@value
class LogPage:
    events: list[LogRecord]
    next_token: str | None


class LogReader(Protocol):
    """The slice's own port: CloudWatch Logs' FilterLogEvents, a page at a time (logs.py)."""

    def filter(self, log_group: str, start_time_ms: int, next_token: str | None, limit: int) -> LogPage: ...


def decode_subscription_event(event: Mapping[str, Any]) -> LogBatch:
    """The Lambda event of a CloudWatch Logs subscription filter (awslogs.data: base64 gzip JSON)."""
    awslogs = mapping(event.get("awslogs"), "awslogs")
    data = required_text(awslogs.get("data"), "awslogs.data")
    try:
        decoded = gzip.decompress(base64.b64decode(data, validate=True))
    except (binascii.Error, OSError, EOFError) as exc:
        raise MalformedEvent("awslogs.data is not base64 gzip") from exc
    document = json_object(decoded.decode("utf-8", errors="replace"), "awslogs payload")
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
