"""Suppression rules: which delivery events stop further sends to a recipient.

- email: permanent bounce → suppress; complaint → suppress; transient bounces: `limit` within
  `window` (defaults 3 in 7 days, settings.transient_bounce_limit / _window_days) → suppress.
- Mailgun: a permanent failure whose reason names the address (bounce, hardfail, an address
  Mailgun already suppressed) → suppress; other permanent failures count as transient bounces;
  `unsubscribed` → suppress.
- SMS: invalid number, opted out, blocked → suppress at once; every other failure (and any
  provider string we do not know, which is logged) is transient: the message ends `failed`,
  the number stays sendable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from enum import StrEnum

from sendledger.domain.events import DeliveryEvent, EventKind, EventSource
from sendledger.domain.values import value


class Action(StrEnum):
    NONE = "none"
    SUPPRESS = "suppress"
    COUNT_TRANSIENT = "count_transient"  # suppress once the transient limit is reached


@value
class Verdict:
    action: Action
    reason: str | None = None
    known: bool = True  # False: a provider string the rules do not list (logged, transient)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


# Documented SNS providerResponse strings that mean "this number cannot receive": both the
# current wording and the older "blacklisted" spellings.
SMS_PERMANENT = frozenset(
    _norm(text)
    for text in (
        "Invalid phone number",
        "Phone number is opted out",
        "Phone has blocked SMS",
        "Phone is on a blocked list",
        "Phone is blacklisted",
        "Destination is on a blocked list",
        "Destination is blacklisted",
    )
)
SMS_TRANSIENT = frozenset(
    _norm(text)
    for text in (
        "Blocked as spam by phone carrier",
        "Message body is invalid",
        "Phone carrier has blocked this message",
        "Phone carrier is currently unreachable/unavailable",
        "Phone is currently unreachable/unavailable",
        "This delivery would exceed max price",
        "Unknown error attempting to reach phone",
    )
)

SES_PERMANENT_SUBTYPES = frozenset({"General", "NoEmail", "Suppressed", "OnAccountSuppressionList"})

# Mailgun `failed`/`permanent` reasons that say the address cannot (or must not) receive mail;
# the other known ones (ESP block, greylisting, retries given up: `old`) count as transient.
MAILGUN_SUPPRESS_REASONS = frozenset(
    {"bounce", "hardfail", "suppress-bounce", "suppress-complaint", "suppress-unsubscribe"}
)
MAILGUN_TRANSIENT_REASONS = frozenset({"generic", "espblock", "greylisted", "blacklisted", "old"})


def classify_sms_failure(provider_response: str | None) -> Verdict:
    text = _norm(provider_response or "")
    reason = f"sms: {provider_response}" if provider_response else "sms: failure"
    if text in SMS_PERMANENT:
        return Verdict(Action.SUPPRESS, reason)
    return Verdict(Action.NONE, reason, known=text in SMS_TRANSIENT)


def classify_ses_bounce(bounce_type: str | None, bounce_subtype: str | None, smtp_status: str | None) -> Verdict:
    reason = f"bounce: {bounce_type}/{bounce_subtype}"
    if bounce_type == "Permanent":
        # RFC 3463 5.2.2 (mailbox full) reported as permanent is best treated as transient.
        if smtp_status == "5.2.2":
            return Verdict(Action.COUNT_TRANSIENT, reason)
        return Verdict(Action.SUPPRESS, reason, known=bounce_subtype in SES_PERMANENT_SUBTYPES)
    if bounce_type in ("Transient", "Undetermined"):
        return Verdict(Action.COUNT_TRANSIENT, reason, known=bounce_type == "Transient")
    return Verdict(Action.COUNT_TRANSIENT, reason, known=False)


def classify_mailgun_failure(reason: str | None, smtp_status: str | None) -> Verdict:
    """A permanent Mailgun failure (temporary ones are retried by Mailgun and never get here)."""
    text = f"bounce: mailgun/{reason or 'unknown'}"
    if smtp_status == "5.2.2":
        return Verdict(Action.COUNT_TRANSIENT, text)
    if reason in MAILGUN_SUPPRESS_REASONS:
        return Verdict(Action.SUPPRESS, text)
    if reason == "generic" and (smtp_status or "").startswith("5.1."):
        return Verdict(Action.SUPPRESS, text)  # bad mailbox or domain (RFC 3463 5.1.x)
    return Verdict(Action.COUNT_TRANSIENT, text, known=reason in MAILGUN_TRANSIENT_REASONS)


# SendGrid `dropped` reasons: these say the address cannot or must not receive mail (SendGrid
# keeps dropping it); the others are about the message (content, headers, plan quota).
SENDGRID_SUPPRESSING_DROPS = frozenset(
    _norm(text) for text in ("Bounced Address", "Invalid", "Spam Reporting Address", "Unsubscribed Address")
)
SENDGRID_MESSAGE_DROPS = frozenset(
    _norm(text) for text in ("Invalid SMTPAPI header", "Spam Content", "Recipient List over Package Quota")
)


def classify_sendgrid(event: DeliveryEvent) -> Verdict:
    """SendGrid bounce (`type` bounce or blocked) and dropped events; complaints as every source's."""
    if event.kind is EventKind.BOUNCE:
        classification = event.evidence.get("bounce_classification")
        reason = f"bounce: sendgrid/{event.bounce_subtype}" + (f" ({classification})" if classification else "")
        if event.bounce_type == "Permanent" and event.provider_response != "5.2.2":
            return Verdict(Action.SUPPRESS, reason)
        # `blocked` refuses the message or the sending IP, not the address; a full mailbox is transient.
        return Verdict(Action.COUNT_TRANSIENT, reason, known=event.bounce_subtype in ("bounce", "blocked"))
    if event.kind is EventKind.REJECT:
        drop = str(event.evidence.get("drop_reason") or "")
        reason = f"dropped: {drop}" if drop else "dropped"
        if _norm(drop) in SENDGRID_SUPPRESSING_DROPS:
            return Verdict(Action.SUPPRESS, reason)
        return Verdict(Action.NONE, reason, known=_norm(drop) in SENDGRID_MESSAGE_DROPS)
    return Verdict(Action.NONE)


def verdict_for(event: DeliveryEvent) -> Verdict:
    if event.source is EventSource.SENDGRID and event.kind in (EventKind.BOUNCE, EventKind.REJECT):
        return classify_sendgrid(event)
    if event.kind is EventKind.BOUNCE and event.source is EventSource.MAILGUN:
        return classify_mailgun_failure(event.bounce_subtype, event.provider_response)
    if event.kind is EventKind.UNSUBSCRIBE:
        return Verdict(Action.SUPPRESS, "unsubscribed")
    if event.kind is EventKind.BOUNCE:
        return classify_ses_bounce(event.bounce_type, event.bounce_subtype, event.provider_response)
    if event.kind is EventKind.COMPLAINT:
        feedback = event.evidence.get("complaint_feedback_type")
        return Verdict(Action.SUPPRESS, f"complaint: {feedback}" if feedback else "complaint")
    if event.kind is EventKind.SMS_FAILURE:
        return classify_sms_failure(event.provider_response)
    return Verdict(Action.NONE)


@value
class TransientPolicy:
    limit: int = 3
    window: timedelta = timedelta(days=7)

    def window_after(self, previous: Iterable[datetime], at: datetime) -> list[datetime]:
        """The bounce times worth keeping after one at `at`: those inside the window, newest last."""
        # Not a set: two bounces in the same millisecond are two bounces (events are deduped by id).
        moments = [*previous, at]
        cutoff = max(moments) - self.window
        kept = sorted(moment for moment in moments if moment > cutoff)
        return kept[-max(self.limit, 1) :]

    def reached(self, window: list[datetime]) -> bool:
        return self.limit > 0 and len(window) >= self.limit
