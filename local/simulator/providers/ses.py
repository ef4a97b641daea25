"""The SES side: SendEmail requests, the mailbox simulator, and SES event-publishing records.

Records have the documented SES event shape (tests/fixtures/aws-formats) and are published to
the configuration set's SNS topic, which delivers them to SQS inside the SNS envelope.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from local.simulator.faults import fault_label
from local.simulator.hooks import answer_locally, body_bytes, caller_identity
from local.simulator.mailbox import mailbox_simulator_kind
from local.simulator.providers import LocalContext
from sendledger.domain.clock import iso
from sendledger.providers.ses import MESSAGE_ID_TAG

LOG = logging.getLogger("sendledger.local.simulator")

REPORTING_MTA = "a8-70.smtp-out.amazonses.com"
THROTTLE_ERROR = "TooManyRequestsException"
THROTTLE_MESSAGE = "Maximum sending rate exceeded."

TimedRecord = tuple[datetime, dict[str, Any]]  # (when the event happens, the SES record)


@dataclass
class EmailRequest:
    source: str
    to: list[str]
    subject: str
    text: str
    html: str | None
    configuration_set: str | None
    tags: dict[str, list[str]]
    label: str | None
    caller: str
    url: str


def parse_send_email(request: AWSPreparedRequest, default_configuration_set: str | None) -> EmailRequest:
    """The SESv2 SendEmail wire request (rest-json body)."""
    body = json.loads(body_bytes(request) or b"{}")
    destination = body.get("Destination") or {}
    to = [
        *destination.get("ToAddresses", []),
        *destination.get("CcAddresses", []),
        *destination.get("BccAddresses", []),
    ]
    content = body.get("Content") or {}
    subject, text, html = "", "", None
    if "Simple" in content:
        simple = content["Simple"]
        subject = (simple.get("Subject") or {}).get("Data", "")
        parts = simple.get("Body") or {}
        text = (parts.get("Text") or parts.get("Html") or {}).get("Data", "")
        html = (parts.get("Html") or {}).get("Data")
    elif "Raw" in content:
        text = base64.b64decode(content["Raw"].get("Data", "")).decode("utf-8", "replace")
    tags: dict[str, list[str]] = {}
    for tag in body.get("EmailTags") or []:
        tags.setdefault(tag["Name"], []).append(tag["Value"])
    return EmailRequest(
        source=body.get("FromEmailAddress", ""),
        to=to or [""],
        subject=subject,
        text=text,
        html=html,
        configuration_set=body.get("ConfigurationSetName") or default_configuration_set,
        tags=tags,
        label=fault_label(to[0]) if to else None,
        caller=caller_identity(request),
        url=request.url,
    )


def throttled(request: AWSPreparedRequest) -> AWSResponse:
    """SES's own 429, which botocore parses into a modeled TooManyRequestsException."""
    headers = {
        "x-amzn-ErrorType": THROTTLE_ERROR,
        "x-amzn-RequestId": str(uuid.uuid4()),
        "Content-Type": "application/json",
    }
    return answer_locally(request, 429, headers, {"message": THROTTLE_MESSAGE})


def outbox_entries(request: EmailRequest, message_id: str, sent_at: datetime) -> list[dict[str, Any]]:
    """One entry per recipient; ``message_id`` is sendledger's, from the tag every send carries."""
    sendledger_id = next(iter(request.tags.get(MESSAGE_ID_TAG, [])), None)
    return [
        {
            "message_id": sendledger_id,
            "channel": "email",
            "from": request.source,
            "to": address,
            "subject": request.subject,
            "text": request.text,
            "html": request.html,
            "provider": "ses",
            "provider_message_id": message_id,
            "sent_at": iso(sent_at),
        }
        for address in request.to
    ]


def ses_events(
    request: EmailRequest, message_id: str, sent_at: datetime, *, region: str, account_id: str
) -> list[TimedRecord]:
    """What SES publishes for one accepted send: Send, then each recipient's outcome."""
    if request.configuration_set is None:
        LOG.info("simulator: %s sent without a configuration set: no events", message_id)
        return []
    mail = mail_object(request, message_id, sent_at, region=region, account_id=account_id)
    events: list[TimedRecord] = [(sent_at, {"eventType": "Send", "mail": mail, "send": {}})]
    for address in request.to:
        kind = mailbox_simulator_kind(address)
        if kind == "bounce":
            at = sent_at + timedelta(milliseconds=2657)
            bounce = _bounce(address, at, "General", "5.1.1", "smtp; 550 5.1.1 user unknown")
            events.append((at, {"eventType": "Bounce", "mail": mail, "bounce": bounce}))
        elif kind == "suppressionlist":
            at = sent_at + timedelta(milliseconds=312)
            diagnostic = (
                "Amazon SES did not send the message to this address because it is on the "
                "suppression list for your account."
            )
            bounce = _bounce(address, at, "OnAccountSuppressionList", "5.1.1", diagnostic)
            bounce["reportingMTA"] = "dns; amazonses.com"
            events.append((at, {"eventType": "Bounce", "mail": mail, "bounce": bounce}))
        else:  # success@, ooto@, complaint@ and any ordinary address are delivered
            at = sent_at + timedelta(milliseconds=1534)
            delivery = {
                "timestamp": iso(at),
                "processingTimeMillis": 1534,
                "recipients": [address],
                "smtpResponse": "250 2.6.0 Message received",
                "reportingMTA": REPORTING_MTA,
            }
            events.append((at, {"eventType": "Delivery", "mail": mail, "delivery": delivery}))
            if kind == "complaint":
                at = sent_at + timedelta(milliseconds=3012)
                complaint = {
                    "complainedRecipients": [{"emailAddress": address}],
                    "timestamp": iso(at),
                    "feedbackId": _feedback_id(at),
                    "userAgent": "Amazon SES Mailbox Simulator",
                    "complaintFeedbackType": "abuse",
                    "arrivalDate": iso(at - timedelta(milliseconds=500)),
                }
                events.append((at, {"eventType": "Complaint", "mail": mail, "complaint": complaint}))
    return events


def mail_object(
    request: EmailRequest, message_id: str, sent_at: datetime, *, region: str, account_id: str
) -> dict[str, Any]:
    source_domain = request.source.rpartition("@")[2].rstrip(">").lower()
    tags: dict[str, list[str]] = {
        "ses:configuration-set": [request.configuration_set or ""],
        "ses:source-ip": ["127.0.0.1"],
        "ses:from-domain": [source_domain],
        "ses:caller-identity": [request.caller],
    }
    tags.update({name: list(values) for name, values in request.tags.items()})
    return {
        "timestamp": iso(sent_at),
        "source": request.source,
        "sourceArn": f"arn:aws:ses:{region}:{account_id}:identity/{source_domain}",
        "sendingAccountId": account_id,
        "messageId": message_id,
        "destination": list(request.to),
        "headersTruncated": False,
        "headers": [
            {"name": "From", "value": request.source},
            {"name": "To", "value": ", ".join(request.to)},
            {"name": "Subject", "value": request.subject},
        ],
        "commonHeaders": {
            "from": [request.source],
            "to": list(request.to),
            "messageId": message_id,
            "subject": request.subject,
        },
        "tags": tags,
    }


SNS_BATCH_LIMIT = 10  # PublishBatch's entries per request


def publish_events(sns: Any, topic_arn: str, batch: list[TimedRecord], now: datetime) -> tuple[int, list[TimedRecord]]:
    """Publish in order, ten per PublishBatch (each entry reaches SQS as its own notification, as
    a Publish would); returns how many went out and the rest, kept from the first failure on."""
    for start in range(0, len(batch), SNS_BATCH_LIMIT):
        chunk = batch[start : start + SNS_BATCH_LIMIT]
        entries = [
            {"Id": str(offset), "Message": json.dumps(clamp_event_time(record, at, now))}
            for offset, (at, record) in enumerate(chunk)
        ]
        try:
            answer = sns.publish_batch(TopicArn=topic_arn, PublishBatchRequestEntries=entries)
        except Exception:
            LOG.exception("simulator: publishing SES events failed; kept for next flush")
            return start, batch[start:]
        failed = sorted(int(entry["Id"]) for entry in answer.get("Failed", []))
        if failed:
            LOG.error("simulator: SNS refused SES events %s; kept for next flush", answer["Failed"])
            return start + failed[0], batch[start + failed[0] :]
    return len(batch), []


def clamp_event_time(record: dict[str, Any], at: datetime, now: datetime) -> dict[str, Any]:
    """An event cannot be older than the send nor newer than its emission."""
    if at <= now:
        return record
    record = json.loads(json.dumps(record))
    body = record.get(record["eventType"].lower()) or {}
    if "timestamp" in body:
        body["timestamp"] = iso(now)
    return record


def _bounce(address: str, at: datetime, subtype: str, status: str, diagnostic: str) -> dict[str, Any]:
    return {
        "bounceType": "Permanent",
        "bounceSubType": subtype,
        "bouncedRecipients": [
            {"emailAddress": address, "action": "failed", "status": status, "diagnosticCode": diagnostic}
        ],
        "timestamp": iso(at),
        "feedbackId": _feedback_id(at),
        "reportingMTA": f"dsn; {REPORTING_MTA}",
    }


def _feedback_id(at: datetime) -> str:
    return f"{int(at.timestamp() * 1000):016x}-{uuid.uuid4()}-000000"


def start(context: LocalContext) -> None:
    """Played at the botocore edge by the core simulator (its hooks, its outbox): nothing to serve."""
    return None
