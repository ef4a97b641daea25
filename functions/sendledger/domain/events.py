"""Delivery events: the one normalised type every provider's parser builds.

The parsers are pure (no boto3), one per provider slice: `providers/<name>/events.py`. A parser
also classifies what its provider's failures mean for the recipient (a `Verdict`): the meaning
of a bounce is the provider's, what to do about it is the domain's (suppression_rules.py). Raw
recipient addresses never leave a parser in an event id or in `evidence`: recipients travel as
the canonical key (for suppression) and as its fingerprint (for ids and logs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sendledger.domain.recipients import fingerprint_of
from sendledger.domain.values import value


class MalformedEvent(ValueError):
    """The payload is not a delivery event we can read (poison: leave it for the DLQ)."""


class Action(StrEnum):
    NONE = "none"
    SUPPRESS = "suppress"
    COUNT_TRANSIENT = "count_transient"  # suppress once the transient limit is reached


@value
class Verdict:
    """What an event means for its recipient, as its provider's parser reads it."""

    action: Action
    reason: str | None = None
    known: bool = True  # False: a provider string the parser does not list (logged, transient)


class EventKind(StrEnum):
    SEND = "Send"
    DELIVERY = "Delivery"
    BOUNCE = "Bounce"
    COMPLAINT = "Complaint"
    REJECT = "Reject"
    DELIVERY_DELAY = "DeliveryDelay"
    SMS_SUCCESS = "SmsSuccess"
    SMS_FAILURE = "SmsFailure"
    UNSUBSCRIBE = "Unsubscribe"  # the recipient opted out


# How a reason names its event's kind: lower case, SMS failures as `sms`.
_REASON_LABELS = {EventKind.SMS_FAILURE: "sms", EventKind.DELIVERY_DELAY: "delivery delay"}


def failure_reason(kind: EventKind, detail: str | None = None) -> str:
    """Every event's reason, a message's or a suppression's, whichever provider sent it:
    `<kind>: <what the provider said>` (`bounce: Permanent/General`, `bounce: <provider>/bounced`,
    `sms: Invalid phone number`), the kind in lower case."""
    label = _REASON_LABELS.get(kind, kind.value.lower())
    return f"{label}: {detail}" if detail else label


@value
class DeliveryEvent:
    source: str  # the event source of the provider slice that parsed it (its watermark, its dedupe keys)
    event_id: str  # deduplication key, unique per source; no raw address inside
    kind: EventKind
    occurred_at: datetime  # when the provider says it happened (event age / lag are measured from it)
    recipient_key: str | None  # `email:<address>` / `sms:+E164`: what suppression is keyed by
    message_id: str | None = None  # sendledger message id (the send's tag); None → resolve by provider id
    provider_message_id: str | None = None  # the provider's own id of the send
    bounce_type: str | None = None
    bounce_subtype: str | None = None
    provider_response: str | None = None  # the provider's response or SMTP status (no diagnostics)
    evidence: dict[str, Any] = field(default_factory=dict)
    escalates: bool | None = None  # what the send told the provider; None: the event does not say
    verdict: Verdict | None = None  # the parser's reading of a failure; None: the kind's default

    @property
    def recipient_fingerprint(self) -> str | None:
        return fingerprint_of(self.recipient_key) if self.recipient_key else None

    @property
    def dedupe_key(self) -> str:
        return f"EVT#{self.source}#{self.event_id}"


# --- what every parser needs: a payload that is not what it says is MalformedEvent ----------


def json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise MalformedEvent(f"{what} is not JSON") from exc
    if not isinstance(value, dict):
        raise MalformedEvent(f"{what} is not a JSON object")
    return value


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedEvent(f"{what} missing or not an object")
    return value


def escalates_flag(value: Any) -> bool | None:
    """The escalates flag a send gave the provider ("1"/"0"), as its events carry it back."""
    return {"1": True, "0": False}.get(value) if isinstance(value, str) else None


def required_text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedEvent(f"{what} missing")
    return value


def optional_text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def normalised(text: str) -> str:
    """A provider phrase compared loosely: lower case, runs of punctuation and space as one space."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()
