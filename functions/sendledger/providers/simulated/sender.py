"""A test caller's carriers: the simulator's rules instead of a provider's API.

Each attempt of a test caller's message gets its own sender (the message's attempt counts the
earlier ones, so `+timeout-lost` hits the first attempt only, in whichever Lambda resends it).
An accepted send gets a simulated provider message id naming the caller (domain/test_mode.py);
the message's carrier says what it would report (its slice's simulation, in its own format), and
those events go to an outlet that puts them where the deployment's ingestion reads test mode's
events (outlets.py). No network call to a provider.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from aws_lambda_powertools import Logger

from sendledger.domain import test_mode
from sendledger.domain.clock import Clock
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.recipients import fingerprint_of
from sendledger.domain.templates import Rendered
from sendledger.ports.providers import SimulatedSend
from sendledger.providers.simulated.rules import Fault, fault_before_acceptance, fault_label

if TYPE_CHECKING:
    from sendledger.domain.messages import Message
    from sendledger.ports.providers import Simulation

logger = Logger(child=True)

# What the carriers' own adapters report for the same faults (adapters/aws.py).
TIMEOUT_CODE, THROTTLE_CODE = "ReadTimeoutError", "TooManyRequestsException"


class EventOutlet(Protocol):
    """Where a simulated carrier's events go: test mode's own path, never a provider's."""

    def put(self, carrier: str, bodies: list[str], now: datetime) -> None:
        """The carrier's events, each as its real path carries it."""


@dataclass
class SimulatedCarriers:
    """The port's adapter (ports/providers.py SimulatedCarriers), one per warm container."""

    outlet: EventOutlet
    clock: Clock
    simulation_of: Callable[[str], Simulation]  # a registered provider's simulation, by its name

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

    def _accept(self, message_id: str, to: str, subject: str, *, escalates: bool) -> ProviderResponse:
        """The carrier reports the accepted send in its own format; the answer names its simulated id."""
        carriers, now = self.carriers, self.carriers.clock.now()
        # Sealed: test mode's queue applies an event naming this message only with this id.
        accepted = test_mode.sealed_provider_id(self.message.owner or "", self.message.message_id, uuid.uuid4().hex)
        send = SimulatedSend(self.message.channel, message_id, accepted, to, subject, escalates, now)
        provider = self.message.provider
        carriers.outlet.put(provider, carriers.simulation_of(provider).events(send), now)
        logger.info(
            "test mode: simulated send",
            extra={"message_id": message_id, "recipient": fingerprint_of(self.message.recipient_key)},
        )
        return ProviderResponse(
            CallResult.ACCEPTED, provider_message_id=accepted, request_id=f"simulated-{uuid.uuid4()}"
        )


class SimulatedEmail(_Attempt):
    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        label, fault = self._fault(to)
        if fault is Fault.TIMEOUT_LOST:
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=TIMEOUT_CODE)
        if fault is Fault.THROTTLE:
            return ProviderResponse(CallResult.THROTTLED, error_code=THROTTLE_CODE)
        accepted = self._accept(message_id, to, content.subject or "", escalates=escalates)
        if label is Fault.TIMEOUT_ACCEPTED:
            return ProviderResponse(CallResult.AMBIGUOUS, error_code=TIMEOUT_CODE)
        return accepted


class SimulatedSms(_Attempt):
    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        return self._accept(message_id, to, "", escalates=False)
