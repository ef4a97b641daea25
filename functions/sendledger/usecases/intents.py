"""A send intent: built from the request, written with eligibility asserted as conditions.

The happy path decides without a read: the intent's write asserts the decision, and only a
failed condition hands back the recipient item to decide from exactly (and write again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain import ids, test_mode
from sendledger.domain.eligibility import NEVER_SUPPRESSED, Decision, Eligibility, StalePolicy, decide, stale_after
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.flags import FlagDecision
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    sms_json,
    template_evidence,
)
from sendledger.domain.provider import source_of
from sendledger.domain.recipients import Recipient, fingerprint_of
from sendledger.domain.sms_segments import SmsSegments
from sendledger.domain.template_versions import TemplateVersion
from sendledger.domain.values import value
from sendledger.ports.messages import (
    Expectations,
    IdempotencyRecord,
    IntentConflict,
    LastSendCondition,
    MessageStore,
    RecordLastSend,
    SendIntent,
    StoredResponse,
)
from sendledger.ports.poller_state import PollerStateStore
from sendledger.ports.resets import ResetRecord

if TYPE_CHECKING:
    from sendledger.settings import Settings
    from sendledger.usecases.send_command import SendCommand

logger = Logger(child=True)

LEASE_SECONDS = 60  # longer than the api Lambda's timeout: an intent older than this crashed
MAX_INTENT_ATTEMPTS = 3
MAX_KEY_GENERATIONS = 12  # an expired key used again gets a new message id; years of monthly reuse


@value
class Committed:
    """The intent is written: call the provider."""


@value
class Decided:
    """Written as decided without a provider call (suppressed, or deferred as stale)."""

    state: MessageState


@value
class KeyTaken:
    """The key's message item exists (a replay, a conflict, or a request in flight)."""

    record: IdempotencyRecord


@value
class ActiveReset:
    """The account's young active reset stands: nothing was written."""

    record: ResetRecord


@value
class KeyInFlight:
    """Another request with the same key is writing its message item right now: nothing was written."""

    retry_after_seconds: int = 1


IntentResult = Committed | Decided | KeyTaken | ActiveReset | KeyInFlight


@dataclass(frozen=True)
class IntentWriter:
    """Writes send intents with eligibility asserted as conditions (the send path and resets)."""

    messages: MessageStore
    poller_state: PollerStateStore  # the watermark the last-send condition is stated against
    settings: Settings  # the unknown grace, the deferral's poll interval

    def commit(self, intent: SendIntent, flags: FlagDecision) -> IntentResult:
        """Write the intent with eligibility asserted as conditions, deciding exactly on conflict.

        Suppression is always a condition: never suppressed, or the version read. The recipient's
        last send is one only under `defer`, where staleness changes what the send does: first
        optimistically (no reads), no send newer than the last watermark this container read minus
        the grace, however old that read is (an older watermark only makes the condition stricter,
        domain/watermarks.py); no earlier send at all before the container's first read. Under
        `allow` the recipient's update records the label's inputs instead (domain/eligibility.py),
        against the watermark read last (read again after the write when older than the cache's
        age). When a condition fails, the cancelled transaction hands back the recipient item;
        decide from it (under `defer` with a recent watermark) and write again with exact
        conditions, so a concurrent change is never missed.
        """
        now = intent.first_entry.at
        grace = timedelta(seconds=self.settings.unknown_grace_seconds)
        source = source_of(intent.message.provider)
        policy = flags.stale_eligibility_policy
        watermark, refresh = self._first_try(intent, policy, source, grace)
        generations = 0
        for _ in range(MAX_INTENT_ATTEMPTS):
            conflict = self.messages.commit_intent(intent)
            if conflict is None:
                if refresh:
                    self.poller_state.recent_watermark(source, now)  # for this container's next sends
                return Committed()
            if conflict.existing is not None and conflict.existing.expired(now) and generations < MAX_KEY_GENERATIONS:
                generations += 1  # the key expired and is used again: a new intent under a new id
                _regenerate(intent)
                continue
            taken = _taken(conflict, intent)
            if taken is not None:
                return taken
            if conflict.recipient is None:
                raise DependencyUnavailable("ledger transaction conflicted; retry", retry_after_seconds=1)
            recipient = conflict.recipient
            if policy is StalePolicy.ALLOW:
                # Only the suppression condition can have failed: its version moved.
                decision = decide(recipient.suppression, None, watermark, _whole_ms(now), grace)
            else:
                if recipient.last_send_at is not None and not recipient.suppression.suppressed:
                    watermark = self.poller_state.recent_watermark(source, now)
                decision = decide(recipient.suppression, recipient.last_send_at, watermark, now, grace)
            logger.info(
                "eligibility",
                extra={
                    "message_id": intent.message.message_id,
                    "recipient": fingerprint_of(intent.message.recipient_key),
                    **decision.evidence(),
                },
            )
            if decision.result is Eligibility.SUPPRESSED:
                return self._commit_decided(intent, decision, MessageState.SUPPRESSED, "recipient suppressed")
            if decision.result is Eligibility.ELIGIBLE_STALE and policy is StalePolicy.DEFER:
                return self._commit_decided(intent, decision, MessageState.PENDING, "eligibility stale: deferred")
            evidence = decision.evidence()
            if policy is StalePolicy.ALLOW:
                evidence.pop("eligibility")
                last_send: LastSendCondition | RecordLastSend = intent.expectations.last_send
            else:
                last_send = LastSendCondition(recipient.last_send_at, exact=True)
            intent.expectations = Expectations(suppression_version=recipient.suppression.version, last_send=last_send)
            intent.first_entry = _with_evidence(intent.first_entry, evidence)
        raise DependencyUnavailable(f"recipient state kept changing at {now.isoformat()}; retry", retry_after_seconds=1)

    def _first_try(
        self, intent: SendIntent, policy: StalePolicy, source: str, grace: timedelta
    ) -> tuple[datetime | None, bool]:
        """The first try's conditions and evidence: (the watermark used, whether to read it after the write)."""
        now = intent.first_entry.at
        inputs: dict[str, object] = {"grace_seconds": int(grace.total_seconds()), "stale_policy": policy.value}
        if policy is StalePolicy.DEFER:
            watermark = self.poller_state.known_watermark(source)
            intent.expectations = Expectations(last_send=LastSendCondition(stale_after(watermark, grace)))
            decided = decide(NEVER_SUPPRESSED, None, watermark, now, grace)
            intent.first_entry = _with_evidence(intent.first_entry, {**decided.evidence(), **inputs})
            return watermark, False
        # A watermark read within the cache's age; when there is none, the last one read (an older one
        # only labels more sends stale, domain/watermarks.py), read again once the intent is written:
        # a replay, turned away by that write, never pays the read.
        watermark = self.poller_state.recent_watermark(source, now, read=False)
        refresh = watermark is None
        watermark = watermark or self.poller_state.known_watermark(source)
        intent.expectations = Expectations(last_send=RecordLastSend(stale_after(watermark, grace)))
        # The age from the intent's own millisecond: its entry's time minus the age is the watermark, exactly.
        seen = decide(NEVER_SUPPRESSED, None, watermark, _whole_ms(now), grace).evidence()
        seen.pop("eligibility")  # the label comes from the stream, once the marker it replaced is known
        intent.first_entry = _with_evidence(intent.first_entry, {**seen, **inputs})
        return watermark, refresh

    def _commit_decided(self, intent: SendIntent, decision: Decision, state: MessageState, reason: str) -> IntentResult:
        message = intent.message
        message.state = state
        message.reason = reason
        intent.first_entry = HistoryEntry(
            at=intent.first_entry.at,
            type=HistoryType.DECIDED,
            state=state,
            evidence={**intent.first_entry.evidence, **decision.evidence(), "decision": state.value},
        )
        if state is MessageState.PENDING:
            # Deferred by the stale-eligibility policy: the poller retries once the outcome is knowable.
            intent.due = (
                DueKind.PENDING,
                intent.first_entry.at + timedelta(seconds=self.settings.poll_interval_seconds),
            )
        elif message.escalation:
            intent.due = (DueKind.OUTCOME, intent.first_entry.at)  # failed for good before the deadline: escalate now
        else:
            intent.due = None  # decided for good: nothing left for the poller
        stored = StoredResponse.of(message) if intent.idempotency_key else None
        conflict = self.messages.commit_decided(intent, stored)
        if conflict is None:
            return Decided(state)
        taken = _taken(conflict, intent)
        if taken is not None:
            return taken
        raise DependencyUnavailable("ledger transaction conflicted; retry", retry_after_seconds=1)


def _taken(conflict: IntentConflict, intent: SendIntent) -> IntentResult | None:
    """What a conflict on the key or on the account's reset answers (None: neither was taken)."""
    if conflict.existing is not None:
        return KeyTaken(conflict.existing)
    if conflict.reset is not None:
        return ActiveReset(conflict.reset)
    if conflict.in_flight and intent.idempotency_key is not None:
        return KeyInFlight()
    return None


def _whole_ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _with_evidence(entry: HistoryEntry, evidence: dict[str, object]) -> HistoryEntry:
    return replace(entry, evidence={**entry.evidence, **evidence})


def _regenerate(intent: SendIntent) -> None:
    assert intent.idempotency_key is not None
    intent.generation += 1
    intent.message.message_id = ids.keyed_message_id(intent.idempotency_key, intent.generation)
    if intent.reset is not None:
        intent.reset = replace(intent.reset, message_id=intent.message.message_id)


def new_message(
    command: SendCommand,
    recipient: Recipient,
    now: datetime,
    message_id: str | None = None,
    *,
    provider: str,
    test: bool = False,
    sms: SmsSegments | None = None,
) -> Message:
    owner = command.owner or command.caller
    return Message(
        message_id=message_id or ids.message_id(now),
        channel=recipient.channel,
        to=recipient.address,
        template=command.template,
        state=MessageState.SENDING,
        category=command.category,
        created_at=now,
        updated_at=now,
        # A test caller's recipient is its own (domain/test_mode.py): apart from real suppressions.
        recipient_key=test_mode.recipient_key(owner, recipient.key) if test else recipient.key,
        provider=provider,
        params=command.params,
        escalation=command.escalation,
        parent_key=command.parent_key,
        owner=owner,
        business_event_id=command.event_id,
        test=test,
        sms=sms,
    )


def first_entry(
    message: Message, recipient: Recipient, now: datetime, flags: FlagDecision, version: TemplateVersion
) -> HistoryEntry:
    return HistoryEntry(
        at=now,
        type=HistoryType.INTENT,
        state=MessageState.SENDING,
        evidence={
            "recipient": fingerprint_of(message.recipient_key),  # the category is the message's own
            # Which words went out: the version's hash, never the rendered text (a reset link).
            "template": template_evidence(message.template, version),
            **flags.evidence(),
            **({"test": True} if message.test else {}),  # only when true: the item's size
            **({f"sms_{name}": got for name, got in sms_json(message.sms).items()} if message.sms else {}),
        },
    )
