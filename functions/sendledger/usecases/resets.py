"""Password resets (OWASP Forgot Password): one active token per account, single-use consume.

The reset record is a single item per caller and account (caller A's account "42" is not
caller B's: neither can replace, consume, lock or see the other's); a new request replaces it
in the same transaction as the send intent, so two tokens are never valid at once. Only SHA-256
hashes of tokens are stored; the token itself exists only in the outgoing message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain import ids, templates, tokens
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.flags import FlagDecision
from sendledger.domain.messages import END_STEP, DueKind, HistoryEntry, HistoryType, MessageState, Template
from sendledger.domain.recipients import Channel, Recipient, parse_recipient
from sendledger.domain.template_versions import (
    RESET_LINK_PARAM,
    RESET_TEMPLATE_ID,
    RESET_WINDOW_PARAM,
    TemplateVersion,
)
from sendledger.ports.messages import Expectations, MessageStore, Outcome, SendIntent
from sendledger.ports.resets import Replacement, ResetRecord, ResetStore
from sendledger.usecases.delivery import Delivery, OutcomeRecorder
from sendledger.usecases.intents import LEASE_SECONDS, ActiveReset, IntentWriter, first_entry, new_message
from sendledger.usecases.results import ResetRequested, TokenConsumed, TokenRefused
from sendledger.usecases.send_command import Routing, SendCommand, carrier_for
from sendledger.usecases.template_catalog import TemplateCatalog

if TYPE_CHECKING:
    from sendledger.settings import Settings

logger = Logger(child=True)

UNSENT = "unsent"  # token hash until the first mail is sent: matches no token
# Sends that certainly did not reach the provider: the reset may be re-armed and resent.
PROVEN_NOT_ACCEPTED = frozenset({MessageState.PENDING, MessageState.RETRY})
EMAIL_CHANGED = "email changed"
MAX_REPLACEMENTS = 3  # a request that keeps meeting a newer reset for another address gives up (503)


class ResetMail(StrEnum):
    """What the poller's half of a reset did; the value is what the poll cycle counts."""

    SENT = "reset_sent"  # the reset's first mail, with its first token
    RESENT = "reset_resent"  # a new token, the previous mail proven never accepted
    SUPPRESSED = "reset_mail_suppressed"  # the recipient is suppressed now: settled without a send
    MOVED_ON = "reset_mail_moved_on"  # its message is no longer waiting to be sent


@dataclass(frozen=True)
class ResetRequests:
    """POST /v1/password-resets: the reset and its mail recorded as due work (the poller sends)."""

    routing: Routing
    intents: IntentWriter
    settings: Settings  # the reset window, the carrier
    clock: Clock
    catalog: TemplateCatalog  # the caller's own reset mail, else the deployment's

    def request(
        self,
        caller: CallerId,
        account_id: str,
        email: str,
        provider: str | None = None,
        locale: str | None = None,
    ) -> ResetRequested:
        """Record the reset and its mail as due work; the poller mints the token and sends it.

        Answering before any provider call gives every address — deliverable, unknown or
        suppressed — the same answer in the same timing class (DynamoDB only). A young active
        reset for the same address is the answer; one for another address (a corrected email) is
        replaced: its token stops being valid in the same write, the new address gets a new reset.
        """
        recipient = parse_recipient(Channel.EMAIL, email, field="email")
        resolved = self.catalog.reset_version(caller)
        template = Template(
            RESET_TEMPLATE_ID,
            resolved.version.version,
            locale=templates.used_locale(resolved.version, Channel.EMAIL, locale),
            owner=resolved.owner,
        )
        command = SendCommand(
            Channel.EMAIL,
            recipient.address,
            template,
            {},
            "security",
            caller=caller,
            idempotency_header=None,
            provider=provider,
        )
        flags = self.routing.flags_for(command, Channel.EMAIL)
        command = replace(command, test=self.routing.test_mode_for(command))
        replacing: ResetRecord | None = None
        for _ in range(MAX_REPLACEMENTS):
            intent = self._reset_intent(command, account_id, recipient, replacing, flags, resolved.version)
            committed = self.intents.commit(intent, flags)
            if not isinstance(committed, ActiveReset):
                assert intent.reset is not None
                return _reset_reply(intent.reset)
            active = committed.record
            if active.recipient_fingerprint in (None, recipient.fingerprint):
                return _reset_reply(active)  # no new token, no new mail
            replacing = active
        raise DependencyUnavailable("the account's reset kept changing; retry", retry_after_seconds=1)

    def _reset_intent(
        self,
        command: SendCommand,
        account_id: str,
        recipient: Recipient,
        replacing: ResetRecord | None,
        flags: FlagDecision,
        version: TemplateVersion,
    ) -> SendIntent:
        settings, now = self.settings, self.clock.now()
        window = timedelta(seconds=settings.reset_window_seconds)
        reset_id = ids.reset_id(now)
        message = new_message(
            command,
            recipient,
            now,
            ids.reset_message_id(reset_id),
            provider=carrier_for(settings, recipient.channel, command.provider, flags),
            test=bool(command.test),
        )
        message.params = None  # the link carries the token: never stored, minted at send time
        message.reset_account_id = account_id
        message.state = MessageState.PENDING
        reset = ResetRecord(
            owner=command.caller,
            account_id=account_id,
            reset_id=reset_id,
            state="active",
            token_hash=UNSENT,
            created_at=now,
            expires_at=now + window,
            failed_attempts=0,
            message_id=message.message_id,
            recipient_fingerprint=recipient.fingerprint,
        )
        evidence: dict[str, object] = {"reset_id": reset_id, "expires_at": iso(reset.expires_at)}
        replaces = None
        if replacing is not None:
            evidence.update(replaces=replacing.reset_id, because=EMAIL_CHANGED)
            note = HistoryEntry(
                at=now,
                type=HistoryType.RESET_REPLACED,
                evidence={"replaced_by": reset_id, "because": EMAIL_CHANGED},
                step=END_STEP,
            )
            replaces = Replacement(replacing, note)
        entry = first_entry(message, recipient, now, flags, version)
        return SendIntent(
            message=message,
            first_entry=replace(
                entry,
                type=HistoryType.RESET_REQUESTED,
                state=MessageState.PENDING,
                evidence={**entry.evidence, **evidence},
            ),
            lease_until=now + timedelta(seconds=LEASE_SECONDS),
            expectations=Expectations(),
            reset=reset,
            reset_window_start=now - window,
            due=(DueKind.PENDING, now),
            replaces=replaces,
        )


@dataclass(frozen=True)
class ResetMailer:
    """The poller's half of a reset: its mail, with a fresh token each time it is sent."""

    messages: MessageStore
    resets: ResetStore
    delivery: Delivery
    outcomes: OutcomeRecorder
    settings: Settings  # where the mailed link points, and the window the mail states
    clock: Clock
    catalog: TemplateCatalog  # the version the reset recorded, retired since or not

    def send(self, record: ResetRecord, seconds_left: Callable[[], float]) -> ResetMail:
        """The poller's half: mint a token, swap its hash into the reset, send — same reset id.

        Runs for the first mail and again only when the previous one is proven not accepted; the
        hash swap is conditional on the previous hash, so two tokens are never valid at once.
        """
        message = self.messages.get(record.message_id)
        if message is None or message.state not in PROVEN_NOT_ACCEPTED:
            return ResetMail.MOVED_ON
        now = self.clock.now()
        token = tokens.mint_token()
        first = record.token_hash == UNSENT
        if not first:
            message.attempt += 1
        message.state = MessageState.SENDING
        entry = HistoryEntry(
            at=now, type=HistoryType.RESET_MAIL, state=MessageState.SENDING, evidence={"attempt": message.attempt}
        )
        lease_until = now + timedelta(seconds=LEASE_SECONDS)
        if not self.resets.rearm(record, tokens.token_hash(token), message, entry, lease_until):
            self.messages.record_outcome(
                Outcome(
                    message=message,
                    new_state=MessageState.SUPPRESSED,
                    entry=HistoryEntry(
                        at=now,
                        type=HistoryType.DECIDED,
                        state=MessageState.SUPPRESSED,
                        evidence={"eligibility": "suppressed"},
                    ),
                )
            )
            return ResetMail.SUPPRESSED
        intent = SendIntent(
            message=message,
            first_entry=entry,
            lease_until=lease_until,
            expectations=Expectations(),
        )
        version = self.catalog.recorded(CallerId(record.owner), message.template)
        content = _content(version, message.template.locale, self.settings, token)
        response = self.delivery.deliver(message, seconds_left, content)
        self.outcomes.record(intent, response)
        mailed = ResetMail.SENT if first else ResetMail.RESENT
        logger.info(
            "reset mail sent" if first else "reset mail sent again",
            extra={"reset_id": record.reset_id, "message_id": message.message_id, "attempt": message.attempt},
        )
        return mailed


def _content(version: TemplateVersion, locale: str | None, settings: Settings, token: str) -> templates.Rendered:
    """The reset mail: the link, and the window in words where the template says it
    (RESET_WINDOW_SECONDS, so the mail never promises a lifetime the token does not have)."""
    offered = {
        RESET_LINK_PARAM: tokens.reset_link(settings.reset_url_template, token),
        RESET_WINDOW_PARAM: tokens.window_words(settings.reset_window_seconds),
    }
    params = {name: text for name, text in offered.items() if name in version.params}
    return templates.render(version, Channel.EMAIL, params, locale)


def _reset_reply(record: ResetRecord) -> ResetRequested:
    # One shape for every address (known, unknown, suppressed): no account enumeration.
    return ResetRequested(record.reset_id, record.expires_at)


@dataclass(frozen=True)
class ResetTokens:
    """POST /v1/password-resets/consume: a token used once, wrong guesses counted and locked out."""

    resets: ResetStore
    max_failed_attempts: int  # settings.reset_max_failed_attempts
    clock: Clock

    def consume(self, caller: CallerId, account_id: str, token: str) -> TokenConsumed | TokenRefused:
        """Only the caller's own reset of the account is tried (and counts a wrong token): another
        caller's token for the same account id is as invalid as any wrong one."""
        now = self.clock.now()
        consumed = self.resets.consume(caller, account_id, tokens.token_hash(token), now)
        if consumed is not None:
            return TokenConsumed(consumed.reset_id, account_id)
        current = self.resets.get(caller, account_id)
        guessing = current is not None and current.state == "active" and current.expires_at > now
        if current is not None and guessing and not tokens.hashes_match(current.token_hash, token):
            self.resets.record_failed_attempt(current, self.max_failed_attempts, now)
            logger.info(
                "reset token mismatch",
                extra={"reset_id": current.reset_id, "failed_attempts": current.failed_attempts + 1},
            )
        return TokenRefused()
