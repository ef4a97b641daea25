"""Mailgun events (Events API items and webhook `event-data`) → the one DeliveryEvent type.

Pure, like events.py: tested against the reference payloads alone. Mailgun guarantees an
event `id` unique only within one day, so the dedupe id is the id and the event's UTC day.
Parsers ignore keys they do not know (Mailgun adds fields over time) and accept `tags: null`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from sendledger.domain.events import Action, DeliveryEvent, EventKind, MalformedEvent, Verdict, failure_reason
from sendledger.domain.values import value
from sendledger.providers.mailgun import SOURCE

TAG = "sendledger"  # sent as `o:tag`, back on every event in `tags`
MESSAGE_ID_VARIABLE = "sendledger-message-id"  # sent as `v:<name>`, back on every event as user-variables
PERMANENT = "permanent"
# `failed`/`permanent` reasons that say the address cannot (or must not) receive mail; the other
# known ones (ESP block, greylisting, retries given up: `old`) count as transient bounces.
SUPPRESS_REASONS = frozenset({"bounce", "hardfail", "suppress-bounce", "suppress-complaint", "suppress-unsubscribe"})
TRANSIENT_REASONS = frozenset({"generic", "espblock", "greylisted", "blacklisted", "old"})

# Events that prove nothing about delivery or the recipient's consent: not applied.
IGNORED = frozenset(
    {"opened", "clicked", "stored", "list_member_uploaded", "list_member_upload_error", "list_uploaded"}
)


@value
class PageItem:
    """One Events API item: its time (what finality is judged by) and what it proves."""

    timestamp: float
    event: DeliveryEvent | None  # None: ignored kind or unreadable (`error` says which)
    error: str | None = None


@value
class EventsPage:
    items: list[PageItem]
    next_url: str | None

    @property
    def last_timestamp(self) -> float | None:
        return self.items[-1].timestamp if self.items else None


class EventsApi(Protocol):
    """Mailgun's Events API (events_api.py): pages, ascending by time."""

    def query(self, params: Mapping[str, str]) -> EventsPage:
        """The first page of a search."""

    def follow(self, url: str) -> EventsPage:
        """The page a previous page's `next` URL names."""


def parse_events_page(document: Any) -> EventsPage:
    """An Events API answer: `items` (ascending when asked so) and `paging.next`."""
    if not isinstance(document, Mapping) or not isinstance(document.get("items"), list):
        raise MalformedEvent("Events API answer has no items list")
    items: list[PageItem] = []
    previous = 0.0
    for raw in document["items"]:
        timestamp = _timestamp(raw.get("timestamp")) if isinstance(raw, Mapping) else None
        # An item without a readable time keeps its neighbour's: the page order is Mailgun's.
        timestamp = previous if timestamp is None else timestamp
        previous = timestamp
        try:
            items.append(PageItem(timestamp, parse_event(raw)))
        except MalformedEvent as exc:
            items.append(PageItem(timestamp, None, error=str(exc)))
    paging = document.get("paging")
    next_url = paging.get("next") if isinstance(paging, Mapping) else None
    return EventsPage(items, next_url if isinstance(next_url, str) and next_url else None)


def parse_event(raw: Any) -> DeliveryEvent | None:
    """One Mailgun event object; None for kinds that prove nothing (opens, clicks, lists)."""
    if not isinstance(raw, Mapping):
        raise MalformedEvent("Mailgun event is not an object")
    name = raw.get("event")
    if not isinstance(name, str) or not name:
        raise MalformedEvent("Mailgun event has no `event`")
    if name in IGNORED:
        return None
    event_id = raw.get("id")
    if not isinstance(event_id, str) or not event_id:
        raise MalformedEvent("Mailgun event has no id")
    timestamp = _timestamp(raw.get("timestamp"))
    if timestamp is None:
        raise MalformedEvent("Mailgun event has no timestamp")
    occurred_at = datetime.fromtimestamp(timestamp, UTC)
    severity = _text(raw.get("severity"))
    reason = _text(raw.get("reason"))
    kind = _kind(name, severity)
    if kind is None:
        raise MalformedEvent(f"unknown Mailgun event {name!r}")
    recipient = _text(raw.get("recipient"))
    variables = raw.get("user-variables")
    message_id = variables.get(MESSAGE_ID_VARIABLE) if isinstance(variables, Mapping) else None
    message = raw.get("message")
    headers = message.get("headers") if isinstance(message, Mapping) else None
    provider_id = headers.get("message-id") if isinstance(headers, Mapping) else None

    # The dedupe id adds the UTC day to Mailgun's id: its own id is kept beside it.
    evidence: dict[str, Any] = {"provider_event": name, "provider_event_id": event_id}
    status = raw.get("delivery-status")
    enhanced = code = None
    if isinstance(status, Mapping):
        enhanced = _text(status.get("enhanced-code"))
        code = status.get("code") if isinstance(status.get("code"), int) else None
    if severity:
        evidence["severity"] = severity
    if reason:
        evidence["reason"] = reason
    if code is not None:
        evidence["delivery_code"] = code
    if enhanced:
        evidence["smtp_status"] = enhanced  # delivery-status.message may quote the address: left out
    reject = raw.get("reject")
    if isinstance(reject, Mapping) and _text(reject.get("reason")):
        evidence["reject_reason"] = _text(reject.get("reason"))
    flags = raw.get("flags")
    if isinstance(flags, Mapping) and flags.get("is-delayed-bounce"):
        evidence["delayed_bounce"] = True
    return DeliveryEvent(
        source=SOURCE,
        event_id=f"{event_id}#{occurred_at.date().isoformat()}",
        kind=kind,
        occurred_at=occurred_at,
        recipient_key=f"email:{recipient.lower()}" if recipient else None,
        message_id=str(message_id) if isinstance(message_id, str) and message_id else None,
        provider_message_id=bare_message_id(provider_id) if isinstance(provider_id, str) and provider_id else None,
        bounce_type="Permanent" if kind is EventKind.BOUNCE else None,
        bounce_subtype=reason if kind is EventKind.BOUNCE else None,
        provider_response=enhanced or (str(code) if code is not None else None),
        evidence=evidence,
        verdict=classify_failure(reason, enhanced or (str(code) if code is not None else None))
        if kind is EventKind.BOUNCE
        else None,
    )


def classify_failure(reason: str | None, smtp_status: str | None) -> Verdict:
    """A permanent failure (temporary ones are retried by Mailgun and never get here)."""
    text = failure_reason(EventKind.BOUNCE, f"mailgun/{reason or 'unknown'}")
    if smtp_status == "5.2.2":
        return Verdict(Action.COUNT_TRANSIENT, text)
    if reason in SUPPRESS_REASONS:
        return Verdict(Action.SUPPRESS, text)
    if reason == "generic" and (smtp_status or "").startswith("5.1."):
        return Verdict(Action.SUPPRESS, text)  # bad mailbox or domain (RFC 3463 5.1.x)
    return Verdict(Action.COUNT_TRANSIENT, text, known=reason in TRANSIENT_REASONS)


def parse_queued(body: str) -> list[DeliveryEvent]:
    """One queued webhook event (its `event-data`, as the intake queued it); [] for one that proves nothing."""
    try:
        document = json.loads(body)
    except (TypeError, ValueError, RecursionError) as exc:
        raise MalformedEvent("queued Mailgun event is not JSON") from exc
    event = parse_event(document)
    return [event] if event is not None else []


def bare_message_id(value: str) -> str:
    """The send answer's `<id@domain>` as events carry it, without brackets."""
    return value.strip().removeprefix("<").removesuffix(">")


def _kind(name: str, severity: str | None) -> EventKind | None:
    if name == "failed":
        # Mailgun retries temporary failures: history (and proof of acceptance), not an outcome.
        return EventKind.BOUNCE if severity == PERMANENT else EventKind.DELIVERY_DELAY
    return {
        "accepted": EventKind.SEND,
        "delivered": EventKind.DELIVERY,
        "rejected": EventKind.REJECT,
        "complained": EventKind.COMPLAINT,
        "unsubscribed": EventKind.UNSUBSCRIBE,
    }.get(name)


def _timestamp(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
