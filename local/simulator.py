"""The local SES / SNS simulator: plays the providers at the transport edge.

The Lambda code calls the real APIs (``sesv2.SendEmail``, ``sns.Publish`` with a phone number)
through boto3 clients built from the default session. The simulator registers botocore event
handlers on that session, so every client created *after* :meth:`Simulator.install` is
observed, without any change to the production adapters:

* ``before-send.sesv2.SendEmail`` / ``before-send.sns.Publish`` see the real wire request
  (rest-json body for SESv2, form-encoded query body for SNS). They apply the label faults
  that happen *before* the provider accepts anything (``+timeout-lost``: a ``ReadTimeoutError``
  without forwarding; ``+throttle``: a genuine HTTP 429 ``TooManyRequestsException`` response
  that botocore parses itself) and otherwise let the request through to moto.
* ``after-call.sesv2.SendEmail`` / ``after-call.sns.Publish`` see moto's answer. On acceptance
  they record the outbox entry and queue the provider's delivery events; ``+timeout-accepted``
  then raises ``ReadTimeoutError`` so the caller never learns the message id.

Events are *deferred*: :meth:`Simulator.flush` publishes queued SES event-publishing records
to the SNS topic (moto delivers the SNS envelope to the SQS queue), writes queued SMS
delivery-status records into the CloudWatch log groups and hands them to the
``sms_delivery_logs`` Lambda as a CloudWatch Logs subscription would.

Works with moto's in-process ``mock_aws`` (install after the mock has started: ``mock_aws``
replaces ``boto3.DEFAULT_SESSION``) and with a moto server (``AWS_ENDPOINT_URL``).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import logging
import re
import secrets
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from io import BytesIO
from typing import Any
from urllib.parse import parse_qs

import boto3
import boto3.session
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ReadTimeoutError

from local.constants import (
    ACCOUNT_ID,
    CONFIGURATION_SET,
    REGION,
    SES_EVENTS_TOPIC,
    SMS_FAILURE_SUBSCRIPTION_FILTER,
    SMS_SUCCESS_SUBSCRIPTION_FILTER,
    sms_log_groups,
    topic_arn,
)

LOG = logging.getLogger("sendledger.local.simulator")

MAILBOX_SIMULATOR_DOMAIN = "simulator.amazonses.com"
LABEL_TIMEOUT_ACCEPTED = "timeout-accepted"
LABEL_TIMEOUT_LOST = "timeout-lost"
LABEL_THROTTLE = "throttle"
THROTTLED_CALLS = 2

SMS_SUCCESS_RESPONSE = "Message has been accepted by phone carrier"
# XX of +1NPA55501XX, by tens: None = delivered, "" = no status ever, else the failure string.
_SMS_TENS: dict[int, str | None] = {
    5: "Phone carrier is currently unreachable/unavailable",
    6: "Invalid phone number",
    7: "Phone number is opted out",
    8: "Unknown error attempting to reach phone",
    9: "",
}
_FICTIONAL_NUMBER = re.compile(r"^\+1\d{3}55501(\d{2})$")
_REPORTING_MTA = "a8-70.smtp-out.amazonses.com"

Clock = Callable[[], datetime]
SmsDelivery = Callable[[dict[str, Any]], Any]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_ms(moment: datetime) -> str:
    """``2026-11-29T10:00:00.012Z``, the SES event timestamp format."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (f"{moment.microsecond // 1000:03d}Z")


def sns_log_timestamp(moment: datetime) -> str:
    """``2026-11-29 10:00:05.120``: SNS delivery-status logs, UTC without a zone."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.") + (f"{moment.microsecond // 1000:03d}")


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def fault_label(address: str) -> str | None:
    """The fault label at the end of an address's local part (``alice+throttle@x`` → throttle)."""
    local = address.rsplit("@", 1)[0].lower()
    for label in (LABEL_TIMEOUT_ACCEPTED, LABEL_TIMEOUT_LOST, LABEL_THROTTLE):
        if local.endswith("+" + label):
            return label
    return None


def mailbox_simulator_kind(address: str) -> str | None:
    """``bounce`` for ``bounce+x@simulator.amazonses.com``; None outside the mailbox simulator."""
    local, _, domain = address.rpartition("@")
    if domain.lower() != MAILBOX_SIMULATOR_DOMAIN:
        return None
    base = local.split("+", 1)[0].lower()
    return base if base in {"success", "bounce", "complaint", "ooto", "suppressionlist"} else None


def sms_outcome(phone_number: str) -> str | None:
    """The providerResponse a fictional number yields; "" for no status ever."""
    match = _FICTIONAL_NUMBER.match(phone_number)
    if match is None:
        return SMS_SUCCESS_RESPONSE
    tens = int(match.group(1)) // 10
    outcome = _SMS_TENS.get(tens)
    return SMS_SUCCESS_RESPONSE if outcome is None else outcome


def cloudwatch_event_id() -> str:
    """A 56-digit decimal string, the shape of a CloudWatch Logs event id."""
    return str(10**55 + secrets.randbelow(9 * 10**55))


def decode_subscription_event(event: dict[str, Any]) -> dict[str, Any]:
    """Inverse of the ``awslogs.data`` encoding (base64 of gzip of JSON)."""
    decoded: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    return decoded


def encode_subscription_event(payload: dict[str, Any]) -> dict[str, Any]:
    data = base64.b64encode(gzip.compress(json.dumps(payload).encode("utf-8"))).decode("ascii")
    return {"awslogs": {"data": data}}


def _body_bytes(request: AWSPreparedRequest) -> bytes:
    body: Any = request.body
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):  # a seekable stream: read it and rewind for the real send
        position = body.tell()
        data = body.read()
        body.seek(position)
        return data if isinstance(data, bytes) else str(data).encode("utf-8")
    return bytes(body)


class _RawBody(BytesIO):
    """The raw object botocore's AWSResponse reads (urllib3-like ``stream``)."""

    def stream(self, **_kwargs: Any) -> Any:
        contents = self.read()
        while contents:
            yield contents
            contents = self.read()


@dataclass
class _EmailRequest:
    source: str
    to: list[str]
    subject: str
    text: str
    configuration_set: str | None
    tags: dict[str, list[str]]
    label: str | None
    caller: str
    url: str


@dataclass
class _SmsRequest:
    phone_number: str
    message: str
    sms_type: str


@dataclass
class _PendingSms:
    record: dict[str, Any]
    log_group: str
    log_stream: str
    not_before: datetime
    written: bool = False
    event: dict[str, Any] = field(default_factory=dict)


class Simulator:
    """SES and SNS (SMS) as the local stack and the tests see them. Thread-safe."""

    def __init__(
        self,
        *,
        region: str = REGION,
        account_id: str = ACCOUNT_ID,
        ses_topic_arn: str | None = None,
        default_configuration_set: str | None = CONFIGURATION_SET,
        sms_success_log_group: str | None = None,
        sms_failure_log_group: str | None = None,
        clock: Clock = utc_now,
        aws_session: boto3.session.Session | None = None,
    ) -> None:
        self.region = region
        self.account_id = account_id
        self.ses_topic_arn = ses_topic_arn or topic_arn(SES_EVENTS_TOPIC, region, account_id)
        self.default_configuration_set = default_configuration_set
        success_group, failure_group = sms_log_groups(region, account_id)
        self.sms_success_log_group = sms_success_log_group or success_group
        self.sms_failure_log_group = sms_failure_log_group or failure_group
        self.clock = clock
        self._aws_session = aws_session
        self._lock = threading.RLock()
        self._in_flight = threading.local()
        self._outbox: list[dict[str, Any]] = []
        self._label_calls: dict[str, int] = {}
        self._ses_queue: list[tuple[datetime, dict[str, Any]]] = []
        self._sms_queue: list[_PendingSms] = []
        self._sessions: list[Any] = []

    # --- installation ---------------------------------------------------------------------
    @classmethod
    def install(cls, session: Any = None, **kwargs: Any) -> Simulator:
        """Create a simulator and hook it into ``session`` (default: boto3's default session).

        Only clients created after this call are observed (botocore copies the session's
        event handlers into each new client).
        """
        simulator = cls(**kwargs)
        simulator.attach(session)
        return simulator

    def attach(self, session: Any = None) -> None:
        if session is None:
            session = boto3._get_default_session()  # creates it when missing, like boto3.client
        events = session.events
        events.register("before-send.sesv2.SendEmail", self._before_send_email)
        events.register("after-call.sesv2.SendEmail", self._after_send_email)
        events.register("before-send.sns.Publish", self._before_publish)
        events.register("after-call.sns.Publish", self._after_publish)
        self._sessions.append(session)

    def uninstall(self) -> None:
        for session in self._sessions:
            events = session.events
            events.unregister("before-send.sesv2.SendEmail", self._before_send_email)
            events.unregister("after-call.sesv2.SendEmail", self._after_send_email)
            events.unregister("before-send.sns.Publish", self._before_publish)
            events.unregister("after-call.sns.Publish", self._after_publish)
        self._sessions.clear()

    # --- public views ---------------------------------------------------------------------
    def outbox(self) -> list[dict[str, Any]]:
        """Every message the simulated providers accepted, oldest first (copies)."""
        with self._lock:
            return [dict(entry) for entry in self._outbox]

    def pending(self) -> dict[str, int]:
        with self._lock:
            return {
                "ses_events": len(self._ses_queue),
                "sms_records": sum(1 for item in self._sms_queue if not item.written),
                "sms_deliveries": len(self._sms_queue),
            }

    def reset(self) -> None:
        with self._lock:
            self._outbox.clear()
            self._label_calls.clear()
            self._ses_queue.clear()
            self._sms_queue.clear()

    # --- SES ------------------------------------------------------------------------------
    def _before_send_email(self, request: AWSPreparedRequest, **_kwargs: Any) -> AWSResponse | None:
        self._in_flight.email = None
        parsed = self._parse_email(request)
        label = parsed.label
        if label == LABEL_TIMEOUT_LOST and self._count_call(parsed.to[0], label) == 1:
            LOG.info("simulator: a send to %s times out before SES accepts it", _masked(parsed.to[0]))
            raise ReadTimeoutError(endpoint_url=request.url)
        if label == LABEL_THROTTLE and self._count_call(parsed.to[0], label) <= THROTTLED_CALLS:
            LOG.info("simulator: SES throttles the send to %s", _masked(parsed.to[0]))
            return self._answer_locally(
                request,
                429,
                {
                    "x-amzn-ErrorType": "TooManyRequestsException",
                    "x-amzn-RequestId": str(uuid.uuid4()),
                    "Content-Type": "application/json",
                },
                {"message": "Maximum sending rate exceeded."},
            )
        self._in_flight.email = parsed
        return None  # let it through to moto

    def _after_send_email(self, http_response: Any, parsed: dict[str, Any], **_kwargs: Any) -> None:
        request: _EmailRequest | None = getattr(self._in_flight, "email", None)
        self._in_flight.email = None
        if request is None or http_response.status_code >= 300 or "MessageId" not in parsed:
            return
        message_id = str(parsed["MessageId"])
        sent_at = self.clock()
        with self._lock:
            for address in request.to:
                self._outbox.append(
                    {
                        "channel": "email",
                        "to": address,
                        "subject": request.subject,
                        "text": request.text,
                        "provider_message_id": message_id,
                        "sent_at": iso_ms(sent_at),
                    }
                )
            self._queue_ses_events(request, message_id, sent_at)
        if request.label == LABEL_TIMEOUT_ACCEPTED:
            LOG.info("simulator: SES accepted %s, the caller sees a timeout", message_id)
            raise ReadTimeoutError(endpoint_url=request.url)

    def _parse_email(self, request: AWSPreparedRequest) -> _EmailRequest:
        body = json.loads(_body_bytes(request) or b"{}")
        destination = body.get("Destination") or {}
        to = [
            *destination.get("ToAddresses", []),
            *destination.get("CcAddresses", []),
            *destination.get("BccAddresses", []),
        ]
        content = body.get("Content") or {}
        subject, text = "", ""
        if "Simple" in content:
            simple = content["Simple"]
            subject = (simple.get("Subject") or {}).get("Data", "")
            parts = simple.get("Body") or {}
            text = (parts.get("Text") or parts.get("Html") or {}).get("Data", "")
        elif "Raw" in content:
            text = base64.b64decode(content["Raw"].get("Data", "")).decode("utf-8", "replace")
        tags: dict[str, list[str]] = {}
        for tag in body.get("EmailTags") or []:
            tags.setdefault(tag["Name"], []).append(tag["Value"])
        return _EmailRequest(
            source=body.get("FromEmailAddress", ""),
            to=to or [""],
            subject=subject,
            text=text,
            configuration_set=body.get("ConfigurationSetName") or self.default_configuration_set,
            tags=tags,
            label=fault_label(to[0]) if to else None,
            caller=_caller_identity(request),
            url=request.url,
        )

    def _queue_ses_events(self, request: _EmailRequest, message_id: str, sent_at: datetime) -> None:
        if request.configuration_set is None:
            LOG.info("simulator: %s sent without a configuration set: no events", message_id)
            return
        mail = self._mail_object(request, message_id, sent_at)
        queue = self._ses_queue
        queue.append((sent_at, {"eventType": "Send", "mail": mail, "send": {}}))
        for address in request.to:
            kind = mailbox_simulator_kind(address)
            if kind == "bounce":
                at = sent_at + timedelta(milliseconds=2657)
                bounce = _bounce(address, at, "General", "5.1.1", "smtp; 550 5.1.1 user unknown")
                queue.append((at, {"eventType": "Bounce", "mail": mail, "bounce": bounce}))
            elif kind == "suppressionlist":
                at = sent_at + timedelta(milliseconds=312)
                diagnostic = (
                    "Amazon SES did not send the message to this address because it is on the "
                    "suppression list for your account."
                )
                bounce = _bounce(address, at, "OnAccountSuppressionList", "5.1.1", diagnostic)
                bounce["reportingMTA"] = "dns; amazonses.com"
                queue.append((at, {"eventType": "Bounce", "mail": mail, "bounce": bounce}))
            else:  # success@, ooto@, complaint@ and any ordinary address are delivered
                at = sent_at + timedelta(milliseconds=1534)
                delivery = {
                    "timestamp": iso_ms(at),
                    "processingTimeMillis": 1534,
                    "recipients": [address],
                    "smtpResponse": "250 2.6.0 Message received",
                    "reportingMTA": _REPORTING_MTA,
                }
                queue.append((at, {"eventType": "Delivery", "mail": mail, "delivery": delivery}))
                if kind == "complaint":
                    at = sent_at + timedelta(milliseconds=3012)
                    complaint = {
                        "complainedRecipients": [{"emailAddress": address}],
                        "timestamp": iso_ms(at),
                        "feedbackId": _feedback_id(at),
                        "userAgent": "Amazon SES Mailbox Simulator",
                        "complaintFeedbackType": "abuse",
                        "arrivalDate": iso_ms(at - timedelta(milliseconds=500)),
                    }
                    queue.append((at, {"eventType": "Complaint", "mail": mail, "complaint": complaint}))

    def _mail_object(self, request: _EmailRequest, message_id: str, sent_at: datetime) -> dict[str, Any]:
        source_domain = request.source.rpartition("@")[2].rstrip(">").lower()
        tags: dict[str, list[str]] = {
            "ses:configuration-set": [request.configuration_set or ""],
            "ses:source-ip": ["127.0.0.1"],
            "ses:from-domain": [source_domain],
            "ses:caller-identity": [request.caller],
        }
        tags.update({name: list(values) for name, values in request.tags.items()})
        return {
            "timestamp": iso_ms(sent_at),
            "source": request.source,
            "sourceArn": f"arn:aws:ses:{self.region}:{self.account_id}:identity/{source_domain}",
            "sendingAccountId": self.account_id,
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

    # --- SNS (SMS) ------------------------------------------------------------------------
    def _before_publish(self, request: AWSPreparedRequest, **_kwargs: Any) -> None:
        self._in_flight.sms = None
        form = parse_qs(_body_bytes(request).decode("utf-8"), keep_blank_values=True)
        phone = (form.get("PhoneNumber") or [""])[0]
        if not phone:  # topic and endpoint publishes (the simulator's own included) pass through
            return
        attributes: dict[str, str] = {}
        for key, values in form.items():
            match = re.fullmatch(r"MessageAttributes\.entry\.(\d+)\.Name", key)
            if match:
                value_key = f"MessageAttributes.entry.{match.group(1)}.Value.StringValue"
                attributes[values[0]] = (form.get(value_key) or [""])[0]
        self._in_flight.sms = _SmsRequest(
            phone_number=phone,
            message=(form.get("Message") or [""])[0],
            sms_type=attributes.get("AWS.SNS.SMS.SMSType", "Promotional"),
        )

    def _after_publish(self, http_response: Any, parsed: dict[str, Any], **_kwargs: Any) -> None:
        request: _SmsRequest | None = getattr(self._in_flight, "sms", None)
        self._in_flight.sms = None
        if request is None or http_response.status_code >= 300 or "MessageId" not in parsed:
            return
        message_id = str(parsed["MessageId"])
        sent_at = self.clock()
        with self._lock:
            self._outbox.append(
                {
                    "channel": "sms",
                    "to": request.phone_number,
                    "subject": None,
                    "text": request.message,
                    "provider_message_id": message_id,
                    "sent_at": iso_ms(sent_at),
                }
            )
            pending = self._sms_record(request, message_id, sent_at)
            if pending is not None:
                self._sms_queue.append(pending)

    def _sms_record(self, request: _SmsRequest, message_id: str, sent_at: datetime) -> _PendingSms | None:
        outcome = sms_outcome(request.phone_number)
        if outcome == "":
            return None  # 90-99: the carrier never reports
        notification = {"messageId": message_id, "timestamp": sns_log_timestamp(sent_at)}
        record: dict[str, Any]
        if outcome == SMS_SUCCESS_RESPONSE:
            dwell = 599
            record = {
                "notification": notification,
                "delivery": {
                    "phoneCarrier": "Example Carrier",
                    "mnc": 270,
                    "destination": request.phone_number,
                    "priceInUSD": 0.00645,
                    "smsType": request.sms_type,
                    "mcc": 310,
                    "providerResponse": outcome,
                    "dwellTimeMs": dwell,
                    "dwellTimeMsUntilDeviceAck": 1344,
                },
                "status": "SUCCESS",
            }
            group = self.sms_success_log_group
        else:
            dwell = 1420
            record = {
                "notification": notification,
                "delivery": {
                    "mnc": 0,
                    "destination": request.phone_number,
                    "priceInUSD": 0.0,
                    "smsType": request.sms_type,
                    "mcc": 0,
                    "providerResponse": outcome,
                    "dwellTimeMs": dwell,
                },
                "status": "FAILURE",
            }
            group = self.sms_failure_log_group
        return _PendingSms(
            record=record,
            log_group=group,
            log_stream=message_id,
            not_before=sent_at + timedelta(milliseconds=dwell),
        )

    # --- fault bookkeeping ----------------------------------------------------------------
    def _count_call(self, address: str, label: str) -> int:
        with self._lock:
            key = f"{label}:{address.lower()}"
            self._label_calls[key] = self._label_calls.get(key, 0) + 1
            return self._label_calls[key]

    def _answer_locally(
        self,
        request: AWSPreparedRequest,
        status: int,
        headers: dict[str, str],
        body: dict[str, Any],
    ) -> AWSResponse:
        """A provider answer that never reaches moto.

        botocore calls *every* before-send handler; under ``mock_aws`` moto's own stubber runs
        after this one and would still execute the request. Pointing the request at a host no
        moto URL pattern matches makes the stubber pass, so the provider really saw nothing.
        """
        url = request.url
        request.url = "http://sendledger-simulator.invalid/answered-locally"
        payload = json.dumps(body).encode("utf-8")
        headers = {**headers, "Content-Length": str(len(payload))}
        return AWSResponse(url, status, headers, _RawBody(payload))

    # --- deferred event emission ----------------------------------------------------------
    def flush(self, deliver_sms: SmsDelivery | None = None) -> dict[str, int]:
        """Emit every queued provider event.

        SES records go to the SNS topic (→ SQS as the SNS envelope); SMS records are written
        to their log group (one stream per message, like SNS) and then, when ``deliver_sms``
        is given, delivered to it as a CloudWatch Logs subscription event. Undelivered
        records stay queued and are retried on the next flush, as a subscription retries.
        """
        with self._lock:
            now = self.clock()
            ses_batch, self._ses_queue = self._ses_queue, []
            sms_batch = list(self._sms_queue)
        published = written = delivered = 0
        failed_ses: list[tuple[datetime, dict[str, Any]]] = []
        if ses_batch:
            sns = self._client("sns")
            for index, (at, record) in enumerate(ses_batch):
                try:
                    sns.publish(
                        TopicArn=self.ses_topic_arn,
                        Message=json.dumps(_clamp_event_time(record, at, now)),
                    )
                    published += 1
                except Exception:
                    LOG.exception("simulator: publishing SES events failed; kept for next flush")
                    failed_ses = ses_batch[index:]
                    break
        if sms_batch:
            logs = self._client("logs")
            for item in sms_batch:
                if item.written:
                    continue
                try:
                    self._write_sms(logs, item, now)
                    written += 1
                except Exception:
                    LOG.exception("simulator: writing SMS delivery logs failed; kept")
                    break
        done: list[_PendingSms] = []
        if deliver_sms is not None:
            for item in sms_batch:
                if not item.written:
                    continue
                try:
                    deliver_sms(item.event)
                    delivered += 1
                    done.append(item)
                except Exception:
                    LOG.exception("simulator: sms_delivery_logs failed; redelivered next flush")
                    break
        with self._lock:
            self._ses_queue = failed_ses + self._ses_queue
            self._sms_queue = [item for item in self._sms_queue if item not in done]
            remaining = len(self._sms_queue)
        return {
            "ses_events_published": published,
            "sms_records_written": written,
            "sms_records_delivered": delivered,
            "sms_records_awaiting_delivery": remaining,
        }

    def _write_sms(self, logs: Any, item: _PendingSms, now: datetime) -> None:
        timestamp = epoch_ms(min(item.not_before, now))
        message = json.dumps(item.record)
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            logs.create_log_stream(logGroupName=item.log_group, logStreamName=item.log_stream)
        logs.put_log_events(
            logGroupName=item.log_group,
            logStreamName=item.log_stream,
            logEvents=[{"timestamp": timestamp, "message": message}],
        )
        failure = item.log_group == self.sms_failure_log_group
        item.event = encode_subscription_event(
            {
                "messageType": "DATA_MESSAGE",
                "owner": self.account_id,
                "logGroup": item.log_group,
                "logStream": item.log_stream,
                "subscriptionFilters": [
                    SMS_FAILURE_SUBSCRIPTION_FILTER if failure else SMS_SUCCESS_SUBSCRIPTION_FILTER
                ],
                "logEvents": [{"id": cloudwatch_event_id(), "timestamp": timestamp, "message": message}],
            }
        )
        item.written = True

    def _client(self, service: str) -> Any:
        session = self._aws_session or boto3.session.Session()
        return session.client(service, region_name=self.region)


def _masked(address: str) -> str:
    """Addresses never reach logs, local ones included: keep the label that explains the fault."""
    local, _, domain = address.partition("@")
    label = local.partition("+")[2]
    return f"{local[:1]}***{'+' + label if label else ''}@{domain}"


def _caller_identity(request: AWSPreparedRequest) -> str:
    """SES reports the IAM identity name; locally the access key id is all there is."""
    authorization = str(request.headers.get("Authorization", ""))
    match = re.search(r"Credential=([^/]+)/", authorization)
    return match.group(1) if match else "local-developer"


def _bounce(address: str, at: datetime, subtype: str, status: str, diagnostic: str) -> dict[str, Any]:
    return {
        "bounceType": "Permanent",
        "bounceSubType": subtype,
        "bouncedRecipients": [
            {
                "emailAddress": address,
                "action": "failed",
                "status": status,
                "diagnosticCode": diagnostic,
            }
        ],
        "timestamp": iso_ms(at),
        "feedbackId": _feedback_id(at),
        "reportingMTA": f"dsn; {_REPORTING_MTA}",
    }


def _feedback_id(at: datetime) -> str:
    return f"{epoch_ms(at):016x}-{uuid.uuid4()}-000000"


def _clamp_event_time(record: dict[str, Any], at: datetime, now: datetime) -> dict[str, Any]:
    """An event cannot be older than the send nor newer than its emission."""
    if at <= now:
        return record
    record = json.loads(json.dumps(record))
    stamp = iso_ms(now)
    body = record.get(record["eventType"].lower()) or {}
    if "timestamp" in body:
        body["timestamp"] = stamp
    return record


__all__ = [
    "Simulator",
    "decode_subscription_event",
    "encode_subscription_event",
    "fault_label",
    "mailbox_simulator_kind",
    "sms_outcome",
]
