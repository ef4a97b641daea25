"""POST /v1/messages: write the intent, call the provider at most once, record the outcome.

Request budget on the happy path: one TransactWriteItems for the intent (the message item,
which is its key's idempotency record, and the recipient's conditional update) and one
UpdateItem for the outcome. A replay costs the one cancelled transaction, which hands back the
key's message item and its stored answer. An SMS the owner's guardrails refuse is decided before
any write (usecases/sms_guard.py); a cap's refusal then reads the key's message, so that a retry of
a request sent before the cap was reached still gets its stored answer. The template version is
the container's (usecases/template_catalog.py): one GetItem the first time a container needs it,
none after within TEMPLATE_CACHE_SECONDS, so a replay on a warm container costs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sendledger.domain import idempotency, ids, templates
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.errors import (
    DependencyUnavailable,
    IdempotencyKeyInFlight,
    IdempotencyKeyReused,
    TemplateRetired,
)
from sendledger.domain.flags import FlagDecision
from sendledger.domain.messages import Message, Template
from sendledger.domain.recipients import Channel, Recipient, parse_recipient
from sendledger.domain.sms_guardrails import CapRefusal
from sendledger.domain.template_versions import TemplateVersion
from sendledger.ports.messages import Expectations, IdempotencyRecord, MessageStore, SendIntent
from sendledger.usecases.delivery import Delivery, OutcomeRecorder
from sendledger.usecases.intents import (
    LEASE_SECONDS,
    Committed,
    IntentWriter,
    KeyInFlight,
    KeyTaken,
    first_entry,
    new_message,
)
from sendledger.usecases.results import Accepted, Replayed, SendResult, SmsRefused
from sendledger.usecases.send_command import Routing, SendCommand, carrier_for
from sendledger.usecases.sms_guard import SmsGuard
from sendledger.usecases.template_catalog import TemplateCatalog
from sendledger.usecases.views import message_view

if TYPE_CHECKING:
    from sendledger.settings import Settings

IN_FLIGHT = "a request with this Idempotency-Key is still in flight"


@dataclass(frozen=True)
class MessageSender:
    """POST /v1/messages, and an escalation's fallback (the same idempotent path)."""

    routing: Routing
    intents: IntentWriter
    delivery: Delivery
    outcomes: OutcomeRecorder
    sms_guard: SmsGuard  # the owner's countries; the daily cap on the api's sender only
    messages: MessageStore  # a crashed first request's message, for its replay
    settings: Settings  # the views, the carrier, the key's retention
    clock: Clock
    catalog: TemplateCatalog  # which version a send renders (the container's cache of them)

    def send(self, command: SendCommand, seconds_left: Callable[[], float]) -> SendResult:
        recipient = parse_recipient(command.channel, command.to)
        key = idempotency.resolve_key(command.idempotency_header, command.event_id, command.template.version)
        scoped = idempotency.scoped_key(command.caller, key)
        try:
            version, command = self._template_of(command)
        except TemplateRetired:
            # A retry of a send made before its version was retired gets that send's answer (one
            # read, on a refusal only); a new key gets the refusal.
            earlier = self._sent_before(scoped)
            if earlier is None or (earlier.template.id, earlier.template.version) != (
                command.template.id,
                command.template.version,
            ):
                raise
            return Replayed(message_view(earlier, self.settings))
        templates.check(version, command.channel, command.params)
        for step, fallback in enumerate(command.escalation.fallback if command.escalation else ()):
            # Checked now: a fallback that cannot be sent would only fail when the escalation fires.
            field = f"escalation.fallback.{step}"
            parse_recipient(fallback.channel, fallback.to, field=f"{field}.to")
            templates.check(version, fallback.channel, command.params, channel_field=f"{field}.channel")
        if recipient.channel is Channel.SMS:
            refused = self.sms_guard.refusal(
                CallerId(command.owner or command.caller), recipient.address, self.clock.now()
            )
            if isinstance(refused, CapRefusal):
                # A retry of a request sent before the cap was reached gets its stored answer (one
                # read, on a refusal only); a country refusal reads nothing at all.
                sent_before = self._sent_before(scoped)
                if sent_before is not None:
                    return Replayed(message_view(sent_before, self.settings))
            if refused is not None:
                return SmsRefused(refused)
        flags = self.routing.flags_for(command, recipient.channel)
        test = self.routing.test_mode_for(command)
        # An SMS's words are rendered before its intent, which records their billed segments; an
        # email's only once the intent is committed (a replay or a suppression renders nothing).
        content = _render(command, version) if recipient.channel is Channel.SMS else None
        intent = self._build_intent(command, recipient, scoped, flags, version, content, test=test)
        committed = self.intents.commit(intent, flags)
        if isinstance(committed, Committed) and intent.message.sms and not intent.message.test:
            self.sms_guard.admitted(CallerId(intent.message.owner or command.caller), intent.message.sms.segments)
        if isinstance(committed, KeyTaken):
            return self._replay(intent, committed.record)
        if isinstance(committed, KeyInFlight):
            raise IdempotencyKeyInFlight(IN_FLIGHT, retry_after_seconds=committed.retry_after_seconds)
        if not isinstance(committed, Committed):
            return self._accepted(intent.message)  # decided without a send (suppressed, deferred)
        response = self.delivery.deliver(
            intent.message, seconds_left, content if content is not None else _render(command, version)
        )
        return self._accepted(self.outcomes.record(intent, response))

    def _template_of(self, command: SendCommand) -> tuple[TemplateVersion, SendCommand]:
        """The version the send renders, and the command naming it as the message records it
        (whose version, and the locale its channel's words are in)."""
        owner = CallerId(command.owner or command.caller)
        if command.pinned:
            return self.catalog.recorded(owner, command.template), command
        resolved = self.catalog.for_send(owner, command.template.id, command.template.version)
        locale = templates.used_locale(resolved.version, command.channel, command.locale)
        template = Template(command.template.id, command.template.version, locale=locale, owner=resolved.owner)
        return resolved.version, replace(command, template=template)

    def _sent_before(self, scoped_key: str) -> Message | None:
        return self.messages.get(ids.keyed_message_id(scoped_key))

    def _accepted(self, message: Message) -> Accepted:
        return Accepted(message, message_view(message, self.settings))

    def _replay(self, intent: SendIntent, record: IdempotencyRecord) -> Replayed:
        now = intent.first_entry.at
        if record.fingerprint != intent.fingerprint:
            raise IdempotencyKeyReused("Idempotency-Key was already used with a different payload")
        if record.completed and record.response is not None:
            # The stored answer, as the idempotency draft says; GET /v1/messages/{id} has the news.
            return Replayed(message_view(record.response.message, self.settings))
        if record.lease_until > now:
            wait = max(1, int((record.lease_until - now).total_seconds()))
            raise IdempotencyKeyInFlight(IN_FLIGHT, retry_after_seconds=wait)
        # The first request crashed mid-flight: its message is the evidence (the poller resolves it).
        message = self.messages.get(record.message_id)
        if message is None:
            raise DependencyUnavailable("idempotency record without its message; retry")
        return Replayed(message_view(message, self.settings))

    def _build_intent(
        self,
        command: SendCommand,
        recipient: Recipient,
        scoped_key: str,
        flags: FlagDecision,
        version: TemplateVersion,
        content: templates.Rendered | None,  # an SMS's: its segments are recorded
        *,
        test: bool,
    ) -> SendIntent:
        settings, now = self.settings, self.clock.now()
        message = new_message(
            command,
            recipient,
            now,
            ids.keyed_message_id(scoped_key),
            provider=carrier_for(settings, recipient.channel, command.provider, flags),
            test=test,
            sms=content.segments() if content is not None else None,
        )
        return SendIntent(
            message=message,
            first_entry=first_entry(message, recipient, now, flags, version),
            lease_until=now + timedelta(seconds=LEASE_SECONDS),
            expectations=Expectations(),
            idempotency_key=scoped_key,
            fingerprint=idempotency.fingerprint(_fingerprint_payload(command, recipient)),
            idempotency_expires_at=now + timedelta(days=settings.idempotency_retention_days),
        )


def _render(command: SendCommand, version: TemplateVersion) -> templates.Rendered:
    """The words the provider is given, in the locale the message records."""
    return templates.render(version, command.channel, command.params, command.template.locale)


def _fingerprint_payload(command: SendCommand, recipient: Recipient) -> dict[str, Any]:
    return {
        "channel": recipient.channel.value,
        "to": recipient.key,
        "template": {"id": command.template.id, "version": command.template.version},
        "params": command.params,
        "category": command.category,
        "event_id": command.event_id,
        "escalation": command.escalation.as_json() if command.escalation else None,
        # Only when given: the fingerprints of keys used before the pin existed stay the same.
        **({"provider": command.provider} if command.provider else {}),
        **({"locale": command.locale} if command.locale else {}),
    }
