"""The SMS side: SNS Publish to a phone number, and SNS delivery-status log records.

Fictional numbers ``+1NPA55501XX`` pick the outcome by XX (the product's rules,
sendledger/providers/simulated/rules.py) and the record is the product's simulated SNS
(sendledger/providers/sns/simulation.py). Records are written to the success or failure log
group (one stream per message, like SNS) and delivered to the ``sms_delivery_logs`` Lambda as a
CloudWatch Logs subscription event.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from botocore.awsrequest import AWSPreparedRequest

from local.simulator.hooks import body_bytes
from local.simulator.providers import LocalContext
from sendledger.domain.clock import iso
from sendledger.providers.sns.events import encode_subscription_event
from sendledger.providers.sns.simulation import sms_status

_ATTRIBUTE_NAME = re.compile(r"MessageAttributes\.entry\.(\d+)\.Name")


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@dataclass
class SmsRequest:
    phone_number: str
    message: str
    sms_type: str
    origination: str | None = None  # the origination number or sender ID, when the caller set one


def parse_publish(request: AWSPreparedRequest) -> SmsRequest | None:
    """The SNS Publish wire request (form-encoded query); None unless it targets a phone number."""
    form = parse_qs(body_bytes(request).decode("utf-8"), keep_blank_values=True)
    phone = (form.get("PhoneNumber") or [""])[0]
    if not phone:  # topic and endpoint publishes (the simulator's own included)
        return None
    attributes: dict[str, str] = {}
    for key, values in form.items():
        match = _ATTRIBUTE_NAME.fullmatch(key)
        if match:
            value_key = f"MessageAttributes.entry.{match.group(1)}.Value.StringValue"
            attributes[values[0]] = (form.get(value_key) or [""])[0]
    return SmsRequest(
        phone_number=phone,
        message=(form.get("Message") or [""])[0],
        sms_type=attributes.get("AWS.SNS.SMS.SMSType", "Promotional"),
        origination=attributes.get("AWS.MM.SMS.OriginationNumber") or attributes.get("AWS.SNS.SMS.SenderID"),
    )


def outbox_entry(request: SmsRequest, message_id: str, sent_at: datetime) -> dict[str, Any]:
    """SNS Publish carries no sendledger id: ``message_id`` is filled in from the ledger's receipt."""
    return {
        "message_id": None,
        "channel": "sms",
        "from": request.origination,
        "to": request.phone_number,
        "subject": None,
        "text": request.message,
        "html": None,
        "provider": "sns",
        "provider_message_id": message_id,
        "sent_at": iso(sent_at),
    }


@dataclass
class PendingSms:
    record: dict[str, Any]
    log_group: str
    log_stream: str
    subscription_filter: str
    not_before: datetime
    written: bool = False
    event: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LogGroup:
    name: str
    subscription_filter: str


def status_record(
    request: SmsRequest, message_id: str, sent_at: datetime, *, success: LogGroup, failure: LogGroup
) -> PendingSms | None:
    """The delivery-status record SNS will log for this publish (the product's simulated SNS,
    events.py); None when none ever comes."""
    status = sms_status(request.phone_number, message_id, sent_at, request.sms_type)
    if status is None:
        return None  # 90-99: the carrier never reports
    group = failure if status.failure else success
    return PendingSms(
        record=status.record,
        log_group=group.name,
        log_stream=message_id,
        subscription_filter=group.subscription_filter,
        not_before=status.at,
    )


def write_record(logs: Any, item: PendingSms, now: datetime, *, account_id: str) -> None:
    """Log the record (where FilterLogEvents finds it) and build its subscription event."""
    timestamp = epoch_ms(min(item.not_before, now))
    message = json.dumps(item.record)
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_stream(logGroupName=item.log_group, logStreamName=item.log_stream)
    logs.put_log_events(
        logGroupName=item.log_group,
        logStreamName=item.log_stream,
        logEvents=[{"timestamp": timestamp, "message": message}],
    )
    item.event = encode_subscription_event(
        {
            "messageType": "DATA_MESSAGE",
            "owner": account_id,
            "logGroup": item.log_group,
            "logStream": item.log_stream,
            "subscriptionFilters": [item.subscription_filter],
            "logEvents": [{"id": cloudwatch_event_id(), "timestamp": timestamp, "message": message}],
        }
    )
    item.written = True


def cloudwatch_event_id() -> str:
    """A 56-digit decimal string, the shape of a CloudWatch Logs event id."""
    return str(10**55 + secrets.randbelow(9 * 10**55))


def decode_subscription_event(event: dict[str, Any]) -> dict[str, Any]:
    """The whole ``awslogs.data`` document (the domain's decoder keeps only what ingestion reads)."""
    decoded: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    return decoded


def start(context: LocalContext) -> None:
    """Played at the botocore edge by the core simulator (its hooks, its outbox): nothing to serve."""
    return None
