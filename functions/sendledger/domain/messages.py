"""The message lifecycle as data: states, the allowed edges, and what they mean."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sendledger.domain.escalation import Escalation
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_segments import SmsSegments
from sendledger.domain.template_versions import TemplateOwner, TemplateVersion
from sendledger.domain.values import value


class MessageState(StrEnum):
    RECEIVED = "received"
    SUPPRESSED = "suppressed"
    SENDING = "sending"
    ACCEPTED = "accepted"
    DELIVERED = "delivered"
    BOUNCED = "bounced"
    COMPLAINED = "complained"
    FAILED = "failed"
    UNKNOWN = "unknown"
    RETRY = "retry"
    UNRESOLVED = "unresolved"
    PENDING = "pending"
    REJECTED = "rejected"
    ESCALATED = "escalated"
    CANCELLED = "cancelled"  # withdrawn before any accepted send (its reset was replaced or ended)


# A message's category, what the stale-eligibility policy is set per; a send that names none is the first.
CATEGORIES = ("transactional", "alert", "security")
DEFAULT_CATEGORY = CATEGORIES[0]

S = MessageState

# Provider outcomes only move "forward": a late `delivered` never undoes `bounced`, and a
# complaint (which arrives after delivery) overrides everything.
_OUTCOME_RANK = {S.ACCEPTED: 1, S.DELIVERED: 2, S.FAILED: 3, S.BOUNCED: 3, S.COMPLAINED: 4}

_LIFECYCLE: dict[MessageState, frozenset[MessageState]] = {
    S.RECEIVED: frozenset({S.SUPPRESSED, S.SENDING, S.PENDING, S.CANCELLED}),
    S.SENDING: frozenset({S.ACCEPTED, S.UNKNOWN, S.PENDING, S.REJECTED}),
    S.UNKNOWN: frozenset({S.ACCEPTED, S.RETRY, S.UNRESOLVED}),
    # A resend re-checks suppression: a proven-absent send may end suppressed instead.
    S.RETRY: frozenset({S.SENDING, S.SUPPRESSED, S.CANCELLED}),
    S.PENDING: frozenset({S.SENDING, S.SUPPRESSED, S.CANCELLED}),
}

# Delivery evidence proves acceptance, so it may arrive while we still think the send is in
# flight or unknown (a crashed outcome write, a timed-out call the provider accepted).
_EVIDENCE_SOURCES = frozenset({S.SENDING, S.UNKNOWN, S.UNRESOLVED, S.ACCEPTED})
_OUTCOMES = frozenset({S.DELIVERED, S.BOUNCED, S.COMPLAINED, S.FAILED})

ESCALATION_TRIGGERS = frozenset({S.FAILED, S.BOUNCED, S.SUPPRESSED, S.REJECTED, S.COMPLAINED})
TERMINAL = frozenset(
    {S.SUPPRESSED, S.DELIVERED, S.BOUNCED, S.COMPLAINED, S.FAILED, S.REJECTED, S.UNRESOLVED, S.ESCALATED, S.CANCELLED}
)
RETRY_AFTER_STATES = frozenset({S.PENDING, S.UNKNOWN, S.SENDING, S.RECEIVED, S.RETRY})


def can_transition(current: MessageState, target: MessageState) -> bool:
    if target is S.ESCALATED:
        return current not in {S.DELIVERED, S.ESCALATED}
    if target in _LIFECYCLE.get(current, frozenset()):
        return True
    if target in _OUTCOMES:
        if current in _EVIDENCE_SOURCES:
            return True
        if current in _OUTCOME_RANK:
            return _OUTCOME_RANK[target] > _OUTCOME_RANK[current]
    return False


def predecessors(target: MessageState) -> frozenset[MessageState]:
    """States from which `target` may be entered: the conditional write's allow-list."""
    return frozenset(state for state in MessageState if can_transition(state, target))


# Outcomes after which a message is never rendered again unless it escalates (a resend needs
# `unknown` or `pending` first): its params are no longer kept.
RENDERED_FOR_GOOD = frozenset({S.ACCEPTED, S.REJECTED})


def keeps_params(state: MessageState, escalates: bool) -> bool:
    return escalates or state not in RENDERED_FOR_GOOD


@value
class Template:
    """The template a message is rendered from: every attempt renders the same words."""

    id: str
    version: str
    locale: str | None = None  # the locale its words are in (None: the template's default)
    owner: TemplateOwner = TemplateOwner.DEPLOYMENT  # whose version: a caller's shadows none after the send


def template_view(template: Template) -> dict[str, str]:
    """A message's template as views and status events show it: locale and owner only when
    not the default, so a deployment template's message reads as it always did."""
    view = {"id": template.id, "version": template.version}
    if template.locale:
        view["locale"] = template.locale
    if template.owner is TemplateOwner.CALLER:
        view["owner"] = template.owner.value
    return view


def template_evidence(template: Template, version: TemplateVersion) -> dict[str, str]:
    """What a message's first history entry records of its words: the version and the SHA-256
    of its canonical body (the same hash GET /v1/templates/{id}/versions/{v} shows)."""
    return {**template_view(template), "sha256": version.sha256}


class DueKind(StrEnum):
    """Why a row sits in the due-work index: what the poller does with it when it is due."""

    INFLIGHT = "inflight"  # a send's lease: expired → unknown
    UNKNOWN = "unknown"  # resolve by evidence or proven absence
    PENDING = "pending"  # throttled, retry or reset mail: send (again)
    OUTCOME = "outcome"  # failed for good: escalate before the deadline
    ESCALATION = "escalation"  # the escalation deadline
    STATUS = "status"  # accepted by a provider that pushes nothing: ask for its status
    COMPLAINT = "complaint"  # delivered by a provider that pushes nothing: ask again, for a complaint


class Transition(StrEnum):
    """What a conditional state change did."""

    APPLIED = "applied"
    MOVED_ON = "moved_on"  # the message was no longer in an allowed state: nothing written
    SUPPRESSED = "suppressed"  # the recipient is suppressed now: nothing written


END_STEP = 5  # a reset's end (consumed, locked, replaced) sorts after whatever its millisecond also saw


class HistoryType(StrEnum):
    INTENT = "intent"
    DECIDED = "decided"
    ELIGIBILITY = "eligibility"  # an `allow` send's label, derived after the fact (domain/eligibility.py)
    PROVIDER_OUTCOME = "provider_outcome"
    RESET_REQUESTED = "reset_requested"
    RESET_MAIL = "reset_mail"  # a token minted (its version is the entry's attempt) and mailed
    RESET_REPLACED = "reset_replaced"  # a request with another address replaced the reset
    RESET_CONSUMED = "reset_consumed"
    RESET_LOCKED = "reset_locked"  # too many wrong tokens
    LEASE_EXPIRED = "lease_expired"
    ABSENCE_PROVEN = "absence_proven"
    PROVIDER_LOOKUP = "provider_lookup"  # the provider's own API found the timed-out send
    UNRESOLVED = "unresolved"
    RESEND = "resend"
    CANCELLED = "cancelled"
    ESCALATED = "escalated"
    ESCALATION_DONE = "escalation_done"
    ESCALATION_NOT_NEEDED = "escalation_not_needed"
    SUPPRESSED = "suppressed"
    UNSUPPRESSED = "unsuppressed"
    EVENT_SEND = "event:Send"
    EVENT_DELIVERY = "event:Delivery"
    EVENT_BOUNCE = "event:Bounce"
    EVENT_COMPLAINT = "event:Complaint"
    EVENT_REJECT = "event:Reject"
    EVENT_DELIVERY_DELAY = "event:DeliveryDelay"
    EVENT_SMS_SUCCESS = "event:SmsSuccess"
    EVENT_SMS_FAILURE = "event:SmsFailure"

    @classmethod
    def of_event(cls, kind: str) -> HistoryType:
        """The entry type of an applied delivery event (by its EventKind value)."""
        return cls(f"event:{kind}")


@value
class HistoryEntry:
    at: datetime
    type: HistoryType
    state: MessageState | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    step: int = 0  # orders entries written within the same millisecond (intent before outcome)


@dataclass
class Message:
    message_id: str
    channel: Channel
    to: str
    template: Template
    state: MessageState
    category: str
    created_at: datetime
    updated_at: datetime
    recipient_key: str
    provider: str  # who carries it: its registry name (domain/provider.py)
    provider_message_id: str | None = None
    reason: str | None = None
    reset_account_id: str | None = None
    params: dict[str, str] | None = None
    escalation: Escalation | None = None
    attempt: int = 1
    parent_key: str | None = None
    owner: str | None = None  # caller_id of the principal whose request created it
    business_event_id: str | None = None  # the request's `event_id`, when it gave one
    history: list[HistoryEntry] = field(default_factory=list)
    # A test caller's: simulated outcomes, no provider called, its recipient key in the caller's
    # namespace (domain/test_mode.py). Decided once, at the intent, for every attempt.
    test: bool = False
    # An SMS's encoding and billed segments, counted from its text at the intent (None: email,
    # or an SMS stored before segments were recorded).
    sms: SmsSegments | None = None


def sms_json(sms: SmsSegments) -> dict[str, Any]:
    """An SMS's segments as the view, the history and the status events show them."""
    return {"encoding": sms.encoding.value, "segments": sms.segments}
