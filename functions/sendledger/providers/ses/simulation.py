"""What simulated SES reports for an accepted send: its configuration-set event-publishing
records (Send, then each recipient's Delivery, Bounce or Complaint), as the events topic carries
them.

The shapes are the documented ones (tests/fixtures/aws-formats); the outcome is the rules'
(providers/simulated/rules.py). Used by the local simulator (local/simulator/providers/ses.py)
and by a test caller's deployed sends (`SesSimulation`, which the test-mode carrier asks).
Pure but for the random feedback ids.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sendledger.domain.clock import iso
from sendledger.providers.ses import ESCALATES_TAG, MESSAGE_ID_TAG
from sendledger.providers.simulated.rules import MailboxKind, TimedRecord, mailbox_simulator_kind

if TYPE_CHECKING:
    from sendledger.domain.events import DeliveryEvent
    from sendledger.ports.providers import SimulatedSend

REPORTING_MTA = "a8-70.smtp-out.amazonses.com"
CALLER_IDENTITY = "sendledger-test-mode"  # ses:caller-identity of a test caller's send


@dataclass
class SesMail:
    """What SES's `mail` object says about one send."""

    source: str
    to: list[str]
    subject: str
    configuration_set: str | None
    tags: dict[str, list[str]] = field(default_factory=dict)
    caller: str = "sendledger"  # ses:caller-identity: the IAM identity that sent it


def ses_events(mail: SesMail, message_id: str, sent_at: datetime, *, region: str, account_id: str) -> list[TimedRecord]:
    """What SES publishes for one accepted send: Send, then each recipient's outcome."""
    if mail.configuration_set is None:
        return []  # no configuration set, no event publishing
    shown = mail_object(mail, message_id, sent_at, region=region, account_id=account_id)
    events: list[TimedRecord] = [(sent_at, {"eventType": "Send", "mail": shown, "send": {}})]
    for address in mail.to:
        kind = mailbox_simulator_kind(address)
        if kind is MailboxKind.BOUNCE:
            at = sent_at + timedelta(milliseconds=2657)
            bounce = _bounce(address, at, "General", "5.1.1", "smtp; 550 5.1.1 user unknown")
            events.append((at, {"eventType": "Bounce", "mail": shown, "bounce": bounce}))
        elif kind is MailboxKind.SUPPRESSIONLIST:
            at = sent_at + timedelta(milliseconds=312)
            diagnostic = (
                "Amazon SES did not send the message to this address because it is on the "
                "suppression list for your account."
            )
            bounce = _bounce(address, at, "OnAccountSuppressionList", "5.1.1", diagnostic)
            bounce["reportingMTA"] = "dns; amazonses.com"
            events.append((at, {"eventType": "Bounce", "mail": shown, "bounce": bounce}))
        else:  # success@, ooto@, complaint@ and any ordinary address are delivered
            at = sent_at + timedelta(milliseconds=1534)
            delivery = {
                "timestamp": iso(at),
                "processingTimeMillis": 1534,
                "recipients": [address],
                "smtpResponse": "250 2.6.0 Message received",
                "reportingMTA": REPORTING_MTA,
            }
            events.append((at, {"eventType": "Delivery", "mail": shown, "delivery": delivery}))
            if kind is MailboxKind.COMPLAINT:
                at = sent_at + timedelta(milliseconds=3012)
                complaint = {
                    "complainedRecipients": [{"emailAddress": address}],
                    "timestamp": iso(at),
                    "feedbackId": _feedback_id(at),
                    "userAgent": "Amazon SES Mailbox Simulator",
                    "complaintFeedbackType": "abuse",
                    "arrivalDate": iso(at - timedelta(milliseconds=500)),
                }
                events.append((at, {"eventType": "Complaint", "mail": shown, "complaint": complaint}))
    return events


def mail_object(mail: SesMail, message_id: str, sent_at: datetime, *, region: str, account_id: str) -> dict[str, Any]:
    source_domain = mail.source.rpartition("@")[2].rstrip(">").lower()
    tags: dict[str, list[str]] = {
        "ses:configuration-set": [mail.configuration_set or ""],
        "ses:source-ip": ["127.0.0.1"],
        "ses:from-domain": [source_domain],
        "ses:caller-identity": [mail.caller],
    }
    tags.update({name: list(values) for name, values in mail.tags.items()})
    return {
        "timestamp": iso(sent_at),
        "source": mail.source,
        "sourceArn": f"arn:aws:ses:{region}:{account_id}:identity/{source_domain}",
        "sendingAccountId": account_id,
        "messageId": message_id,
        "destination": list(mail.to),
        "headersTruncated": False,
        "headers": [
            {"name": "From", "value": mail.source},
            {"name": "To", "value": ", ".join(mail.to)},
            {"name": "Subject", "value": mail.subject},
        ],
        "commonHeaders": {"from": [mail.source], "to": list(mail.to), "messageId": message_id, "subject": mail.subject},
        "tags": tags,
    }


def clamp_event_time(record: dict[str, Any], at: datetime, now: datetime) -> dict[str, Any]:
    """An event cannot be older than the send nor newer than its emission."""
    if at <= now:
        return record
    record = json.loads(json.dumps(record))
    body = record.get(record["eventType"].lower()) or {}
    if "timestamp" in body:
        body["timestamp"] = iso(now)
    return record


def sns_notification(record: dict[str, Any], topic_arn: str, at: datetime) -> dict[str, Any]:
    """The topic's `Notification` envelope an SQS subscription without raw delivery receives."""
    return {
        "Type": "Notification",
        "MessageId": str(uuid.uuid4()),
        "TopicArn": topic_arn,
        "Message": json.dumps(record),
        "Timestamp": iso(at),
        "SignatureVersion": "1",
        "Signature": "",  # SQS consumers do not verify it (the subscription is the trust)
        "SigningCertURL": "",
        "UnsubscribeURL": "",
    }


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


def queue_account(queue_url: str, default: str = "000000000000") -> str:
    """The account id in a queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`)."""
    parts = queue_url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else default


@dataclass(frozen=True)
class SesSimulation:
    """SES for a test caller: the records its configuration set would publish, each as the events
    queue receives it (the record itself: the envelope is optional to its parser)."""

    sender_email: str
    configuration_set: str
    region: str
    account_id: str

    def events(self, send: SimulatedSend) -> list[str]:
        tags = {MESSAGE_ID_TAG: [send.message_id], ESCALATES_TAG: ["1" if send.escalates else "0"]}
        mail = SesMail(self.sender_email, [send.to], send.subject, self.configuration_set, tags, CALLER_IDENTITY)
        records = ses_events(mail, send.provider_message_id, send.at, region=self.region, account_id=self.account_id)
        return [json.dumps(clamp_event_time(record, at, send.at)) for at, record in records]

    def parse(self, body: str) -> list[DeliveryEvent]:
        from sendledger.providers.ses.events import parse_sqs_body

        return parse_sqs_body(body)
