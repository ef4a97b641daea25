from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.clock import Clock
from sendledger.domain.messages import DueKind, HistoryEntry, HistoryType, Message, MessageState
from sendledger.domain.provider import Backoff, CallResult, ProviderResponse, call_with_backoff
from sendledger.domain.recipients import Channel
from sendledger.domain.templates import Rendered
from sendledger.ports.messages import MessageStore, Outcome, SendIntent, StoredResponse

if TYPE_CHECKING:
    from sendledger.ports.providers import EmailSender, SimulatedCarriers, SmsSender
    from sendledger.settings import Settings

logger = Logger(child=True)


@dataclass
class Carriers:
    """Who carries a message: its own provider's sender, or for a test caller's the simulated one."""

    settings: Settings  # which providers are enabled here, and the default email provider
    email: EmailSender  # the default email provider's (settings.email_provider)
    sms: SmsSender  # the SMS provider's (settings.sms_provider)
    # The other email providers enabled beside the default, by name (built on first use).
    other_email: Mapping[str, EmailSender] = field(default_factory=dict)
    # What carries a test caller's messages (built on first use); None: nothing does here, and a
    # test message waits `pending` rather than ever reaching a real provider.
    simulated: SimulatedCarriers | None = None

    def of(self, message: Message) -> tuple[EmailSender | None, SmsSender | None]:
        """A test caller's message is carried by the simulated providers, every attempt: never a real one."""
        if message.test:
            if self.simulated is None:
                return None, None
            if message.channel is Channel.EMAIL:
                return self.simulated.email_sender(message), None
            return None, self.simulated.sms_sender(message)
        return self._email(message.provider), self._sms(message.provider)

    def _email(self, provider: str) -> EmailSender | None:
        """Who carries an email of `provider` now (None: no longer enabled here)."""
        if not self.settings.carries(provider, Channel.EMAIL):
            return None
        return self.email if provider == self.settings.email_provider else self.other_email.get(provider)

    def _sms(self, provider: str) -> SmsSender | None:
        return self.sms if self.settings.carries(provider, Channel.SMS) else None


@dataclass(frozen=True)
class Delivery:
    """The provider call of a written intent: through the message's own provider, with backoff."""

    carriers: Carriers
    backoff: Backoff = field(default_factory=Backoff)
    sleep: Callable[[float], None] = time.sleep

    def deliver(self, message: Message, seconds_left: Callable[[], float], rendered: Rendered) -> ProviderResponse:
        """Send `rendered` through the message's own provider: the one its intent recorded, for every attempt."""
        email, sms = self.carriers.of(message)
        if (email if message.channel is Channel.EMAIL else sms) is None:
            # Disabled since the intent: nothing was sent; the message waits (pending) until it is back.
            logger.warning(
                "provider not enabled", extra={"message_id": message.message_id, "provider": message.provider}
            )
            unavailable = "simulated-provider-not-wired" if message.test else f"provider-not-enabled:{message.provider}"
            return ProviderResponse(CallResult.UNAVAILABLE, error_code=unavailable)

        def call() -> ProviderResponse:
            if email is not None and message.channel is Channel.EMAIL:
                return email.send_email(message.message_id, message.to, rendered, escalates=bool(message.escalation))
            assert sms is not None
            return sms.send_sms(message.message_id, message.to, rendered, message.category)

        return call_with_backoff(call, self.backoff, self.sleep, seconds_left)


@dataclass(frozen=True)
class OutcomeRecorder:
    """The provider's answer written: one conditional write, with the due work it leaves."""

    messages: MessageStore
    settings: Settings  # the poll interval, the unknown grace, the providers' status intervals
    clock: Clock

    def record(self, intent: SendIntent, response: ProviderResponse) -> Message:
        settings, now = self.settings, self.clock.now()
        message = intent.message
        message.state = response.message_state
        message.updated_at = now
        message.provider_message_id = response.provider_message_id or message.provider_message_id
        if response.error_code:
            message.reason = response.error_code
        due_kind, due_at = _due_work(
            message.state, now, response, settings.poll_interval_seconds, settings.unknown_grace_seconds
        )
        if message.escalation and message.state is MessageState.REJECTED:
            due_kind, due_at = DueKind.OUTCOME, now  # refused for good before the deadline: escalate now
        if message.state is MessageState.ACCEPTED:
            due_kind, due_at = status_due(message, settings, now) or (due_kind, due_at)
        entry = HistoryEntry(
            at=now, type=HistoryType.PROVIDER_OUTCOME, state=message.state, evidence=response.evidence(), step=1
        )
        stored = StoredResponse.of(message) if intent.idempotency_key else None
        self.messages.record_outcome(
            Outcome(
                message=message,
                new_state=message.state,
                entry=entry,
                response=response,
                idempotency_key=intent.idempotency_key,
                stored_response=stored,
                due_kind=due_kind,
                due_at=due_at,
            )
        )
        logger.info(
            "provider outcome",
            extra={"message_id": message.message_id, "state": message.state.value, **response.evidence()},
        )
        return message


def status_due(message: Message, settings: Settings, now: datetime) -> tuple[DueKind, datetime] | None:
    """An accepted message of a provider that pushes nothing is asked for its status from then on."""
    interval = settings.status_interval_for(message.provider, message.channel, message.to)
    if interval is None:  # a test caller's too: the lane answers it from the simulated rules
        return None
    return DueKind.STATUS, now + timedelta(seconds=interval)


def _due_work(
    state: MessageState, now: datetime, response: ProviderResponse, poll_interval: int, grace: int
) -> tuple[DueKind | None, datetime | None]:
    if state is MessageState.PENDING:
        wait = max(response.retry_after_seconds or 0, poll_interval)
        return DueKind.PENDING, now + timedelta(seconds=wait)
    if state is MessageState.UNKNOWN:
        # Acceptance evidence is applied whenever it arrives; absence is provable only after grace.
        return DueKind.UNKNOWN, now + timedelta(seconds=grace)
    return None, None
