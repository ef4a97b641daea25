"""The SES side: SendEmail requests at the botocore edge, and publishing SES event records.

The records (the documented SES event shape, tests/fixtures/aws-formats) and the mailbox
simulator's outcomes are the product's simulated SES (sendledger/providers/ses/simulation.py);
here they are published to the configuration set's SNS topic, which delivers them to SQS inside
the SNS envelope.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from local.simulator.faults import fault_label
from local.simulator.hooks import answer_locally, body_bytes, caller_identity
from local.simulator.providers import LocalContext
from sendledger.domain.clock import iso
from sendledger.providers.ses import MESSAGE_ID_TAG
from sendledger.providers.ses.simulation import SesMail, clamp_event_time
from sendledger.providers.ses.simulation import ses_events as simulated_ses_events
from sendledger.providers.simulated.rules import TimedRecord

LOG = logging.getLogger("sendledger.local.simulator")

THROTTLE_ERROR = "TooManyRequestsException"
THROTTLE_MESSAGE = "Maximum sending rate exceeded."


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

    def mail(self) -> SesMail:
        return SesMail(self.source, self.to, self.subject, self.configuration_set, self.tags, self.caller)


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
    """What SES publishes for one accepted send (the product's simulated SES, events.py)."""
    if request.configuration_set is None:
        LOG.info("simulator: %s sent without a configuration set: no events", message_id)
    return simulated_ses_events(request.mail(), message_id, sent_at, region=region, account_id=account_id)


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


def start(context: LocalContext) -> None:
    """Played at the botocore edge by the core simulator (its hooks, its outbox): nothing to serve."""
    return None
