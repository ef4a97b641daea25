"""Everything about Infrai's API the design note does not state: one table, and nothing else in the
slice guesses. `sendledger conformance --provider infrai` against the real service is what
confirms or corrects each row (docs/providers.md lists them).

Stated (not here): base URL, Bearer key, `POST {base}/email/send` with `to`/`subject`/`text` and
`Idempotency-Key`, a 2xx JSON answer whose `id` is the message id, 429 with `Retry-After`
(seconds), `GET {base}/email/get/{id}` for the message's record, no webhooks.
"""

from __future__ import annotations

from sendledger.domain.events import Action, EventKind, Verdict
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value


@value
class Status:
    """What one status value of a message record proves."""

    kind: EventKind | None  # None: still in flight, nothing new proven beyond acceptance
    final: bool  # no later status is expected: stop asking
    verdict: Verdict | None = None  # what it means for the recipient (None: the kind's default)


@value
class Assumptions:
    """The rows of the table (each field one assumption; the instance below holds the values)."""

    paths: dict[Channel, tuple[str, str]]  # (send, get) under the base URL, per channel
    sms_body_fields: tuple[str, str]  # (destination, text) of an SMS send
    email_html_field: str  # beside the stated `text`
    status_field: str  # in the record `GET …/get/{id}` answers
    id_field: str
    time_field: str  # when the status was reached (ISO 8601 or epoch seconds); absent: when we asked
    get_by_idempotency_key: bool
    conflict_statuses: tuple[int, ...]
    error_message_field: str
    statuses: dict[str, Status]
    sms_kinds: dict[EventKind, EventKind]


_ACCEPTED = Status(EventKind.SEND, final=False)

ASSUMED = Assumptions(
    # The SMS namespace mirrors the email one (the design note says only "email and SMS namespaces").
    paths={Channel.EMAIL: ("/email/send", "/email/get/{id}"), Channel.SMS: ("/sms/send", "/sms/get/{id}")},
    # An SMS send's body: the E.164 destination and the text.
    sms_body_fields=("to", "text"),
    # The email body takes `html` beside `text` (the design note shows to, subject, text).
    email_html_field="html",
    # The record names its status and its id in these fields.
    status_field="status",
    id_field="id",
    time_field="updated_at",
    # `GET …/get/{id}` also finds a message by the Idempotency-Key it was sent with: the lookup of
    # a timed-out send, which has no Infrai id yet. If the service answers 404 for keys, the lookup
    # proves absence too early; the resend then carries the same Idempotency-Key, and the
    # provider's own dedupe is the net left (its window is assumed shorter than ours, 30 days,
    # but longer than the grace before a resend, 15 minutes).
    get_by_idempotency_key=True,
    # A key the provider holds for another body (a reset mail resent with a fresh token) answers
    # 409 or 422, as the IETF draft says: an earlier acceptance, for the lookup to find, never a refusal.
    conflict_statuses=(409, 422),
    # Error bodies are a JSON object with a `message`; its text is never kept as evidence.
    error_message_field="message",
    # Status values, email and SMS alike; an unknown one is logged and treated as in flight.
    statuses={
        "queued": _ACCEPTED,
        "accepted": _ACCEPTED,
        "sent": _ACCEPTED,
        "delivered": Status(EventKind.DELIVERY, final=True),
        # A bounce names the address: it suppresses, as every provider's permanent bounce does.
        "bounced": Status(EventKind.BOUNCE, final=True, verdict=Verdict(Action.SUPPRESS, "bounce: infrai/bounced")),
        "complained": Status(EventKind.COMPLAINT, final=True),
        # Failed without a reason: the message ends, the recipient stays sendable.
        "failed": Status(EventKind.REJECT, final=True, verdict=Verdict(Action.NONE, "infrai: failed")),
    },
    # An SMS record's outcomes; a bounce or failure of an SMS is transient (no reason string tells
    # an invalid number from a carrier outage).
    sms_kinds={
        EventKind.DELIVERY: EventKind.SMS_SUCCESS,
        EventKind.BOUNCE: EventKind.SMS_FAILURE,
        EventKind.REJECT: EventKind.SMS_FAILURE,
    },
)
SMS_FAILURE = Verdict(Action.NONE, "sms: infrai failure")
