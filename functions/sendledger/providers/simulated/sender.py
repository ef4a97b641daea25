"""A test caller's carriers: the simulator's rules instead of a provider's API.

Each attempt of a test caller's message gets its own sender (the message's attempt counts the
earlier ones, so `+timeout-lost` hits the first attempt only, in whichever Lambda resends it).
An accepted send gets a simulated provider message id naming the caller (domain/test_mode.py),
and its events, in the carrier's own format (SES, SNS, SendGrid, Mailgun; Infrai pushes
nothing: its status lane answers from the rules),
go to an outlet that puts them where the deployment's ingestion reads that carrier's events
(outlets.py). No network call to a provider.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from aws_lambda_powertools import Logger

from sendledger.domain import test_mode
from sendledger.domain.clock import Clock
from sendledger.domain.provider import CallResult, Provider, ProviderResponse
from sendledger.domain.recipients import fingerprint_of
from sendledger.domain.templates import Rendered
from sendledger.providers.mailgun.events import MESSAGE_ID_VARIABLE
from sendledger.providers.mailgun.events import TAG as MAILGUN_TAG
from sendledger.providers.sendgrid.events import CATEGORY as SENDGRID_CATEGORY
from sendledger.providers.sendgrid.events import ESCALATES_ARG, MESSAGE_ID_ARG
from sendledger.providers.ses import ESCALATES_TAG, MESSAGE_ID_TAG
from sendledger.providers.simulated.events import SesMail, SmsStatus, TimedRecord, ses_events, sms_status
from sendledger.providers.simulated.mailgun_events import MailgunSend, mailgun_events
from sendledger.providers.simulated.rules import Fault, fault_before_acceptance, fault_label
from sendledger.providers.simulated.sendgrid_events import sendgrid_events

if TYPE_CHECKING:
    from sendledger.domain.messages import Message

logger = Logger(child=True)

# What the carriers' own adapters report for the same faults (adapters/aws.py).
TIMEOUT_CODE, THROTTLE_CODE = "ReadTimeoutError", "TooManyRequestsException"
SMS_TYPE = "Transactional"  # what SnsSmsSender asks for
CALLER_IDENTITY = "sendledger-test-mode"  # ses:caller-identity of a simulated send


class EventOutlet(Protocol):
    """Where a simulated carrier's events go: the path the carrier's real events take."""

    def ses_records(self, records: list[TimedRecord], now: datetime) -> None:
        """SES event-publishing records, as SNS delivers them to the SES events queue."""

    def sms_status(self, status: SmsStatus, now: datetime) -> None:
        """An SNS SMS delivery-status record, into its delivery-status log group."""

    def sendgrid_records(self, records: list[TimedRecord], now: datetime) -> None:
        """SendGrid Event Webhook events, as the verified intake queues them, on SendGrid's events queue."""

    def mailgun_records(self, records: list[TimedRecord], now: datetime) -> None:
        """Mailgun events (`event-data`), as the verified intake queues them, on Mailgun's webhook events queue."""


@dataclass
class SimulatedCarriers:
    """The port's adapter (ports/providers.py SimulatedCarriers), one per warm container."""

    outlet: EventOutlet
    clock: Clock
    sender_email: str
    configuration_set: str
    region: str
    account_id: str

    def email_sender(self, message: Message) -> SimulatedEmail:
        return SimulatedEmail(self, message)

    def sms_sender(self, message: Message) -> SimulatedSms:
        return SimulatedSms(self, message)


class _Attempt:
    def __init__(self, carriers: SimulatedCarriers, message: Message) -> None:
        self.carriers = carriers
        self.message = message
        self.calls = 0  # calls of this attempt so far (the backoff calls again when throttled)

    def _fault(self, to: str) -> tuple[Fault | None, Fault | None]:
        """(the address's label, the fault this call meets before acceptance)."""
        label = fault_label(to)
        earlier = (self.message.attempt - 1) + self.calls
        self.calls += 1
        return label, fault_before_acceptance(label, earlier)

    def _accepted_id(self) -> str:
        return test_mode.simulated_provider_id(self.message.owner or "", uuid.uuid4().hex)

    def _no_format(self) -> None:
        if self.message.provider == Provider.INFRAI:
            return  # pushes nothing: its status lane answers a test message from the rules (infrai/lane.py)
        # Accepted, but no events in this carrier's format yet: the message stays `accepted`.
        logger.warning(
            "test mode: no simulated events in this carrier's format",
            extra={"message_id": self.message.message_id, "provider": self.message.provider},
        )


class SimulatedEmail(_Attempt):
    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        label, fault = self._fault(to)
        if fault is Fault.TIMEOUT_LOST:
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=TIMEOUT_CODE)
        if fault is Fault.THROTTLE:
            return ProviderResponse(CallResult.THROTTLED, error_code=THROTTLE_CODE)
        carriers, now, accepted = self.carriers, self.carriers.clock.now(), self._accepted_id()
        if self.message.provider == Provider.SES:
            tags = {MESSAGE_ID_TAG: [message_id], ESCALATES_TAG: ["1" if escalates else "0"]}
            mail = SesMail(
                carriers.sender_email, [to], content.subject or "", carriers.configuration_set, tags, CALLER_IDENTITY
            )
            records = ses_events(mail, accepted, now, region=carriers.region, account_id=carriers.account_id)
            carriers.outlet.ses_records(records, now)
        elif self.message.provider == Provider.SENDGRID:
            args = {MESSAGE_ID_ARG: message_id, ESCALATES_ARG: "1" if escalates else "0"}
            # The simulated id stands where SendGrid's message id goes: X-Message-Id and sg_message_id.
            events = sendgrid_events(to, accepted, accepted, now, custom_args=args, categories=[SENDGRID_CATEGORY])
            carriers.outlet.sendgrid_records(events, now)
        elif self.message.provider == Provider.MAILGUN:
            # The simulated id stands where Mailgun's goes: the `message-id` header every event names.
            send = MailgunSend(
                to,
                accepted,
                {MESSAGE_ID_VARIABLE: message_id},
                [MAILGUN_TAG],
                content.subject or "",
                carriers.sender_email,
            )
            carriers.outlet.mailgun_records(mailgun_events(send, now), now)
        else:
            self._no_format()
        logger.info(
            "test mode: simulated send",
            extra={"message_id": message_id, "recipient": fingerprint_of(self.message.recipient_key)},
        )
        if label is Fault.TIMEOUT_ACCEPTED:
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=TIMEOUT_CODE)
        return _accepted(accepted)


class SimulatedSms(_Attempt):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        now, accepted = self.carriers.clock.now(), self._accepted_id()
        if self.message.provider == Provider.SNS:
            status = sms_status(to, accepted, now, SMS_TYPE)
            if status is not None:  # +1NPA5550190-99: the carrier never reports
                self.carriers.outlet.sms_status(status, now)
        else:
            self._no_format()
        logger.info(
            "test mode: simulated send",
            extra={"message_id": message_id, "recipient": fingerprint_of(self.message.recipient_key)},
        )
        return _accepted(accepted)


def _accepted(provider_message_id: str) -> ProviderResponse:
    return ProviderResponse(
        CallResult.ACCEPTED, provider_message_id=provider_message_id, request_id=f"simulated-{uuid.uuid4()}"
    )
