"""The traffic a deployment sees, as a seeded model: who is mailed, how often, with what.

Nothing here imports the product: the model only says which requests arrive when. The bench
(benchmarks/traffic.py) plays them through the real handlers and counts what each one costs.

A busy minute is too many requests for an in-process emulator, and a thinned-out hour would
give every container a request every few seconds instead of every few milliseconds (its
watermark cache would look colder than it ever is). So the model plays one contiguous
**slice** of the busy hour at full rate: every request of every caller in those seconds. What
came before the slice matters only through the recipients' state: for each recipient mailed in
the slice, the send that preceded it (drawn from the model's inter-send times, seconds to weeks
earlier) is played first, uncounted, through the same containers, so each counted send meets
the recipient item, the watermark and the container caches it would meet deployed.

Parameters and why they are realistic are in benchmarks/README.md ("Traffic model").
"""

from __future__ import annotations

import math
import random
import string
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

# The slice sits in the busy hour of an ordinary Tuesday; only its wall-clock day matters (the
# evidence index's partition).
SLICE_START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)


@dataclass(frozen=True)
class TrafficModel:
    seed: int = 26
    slice_seconds: float = 20.0
    busy_caller_per_second: float = 50.0  # the one busy caller: 180,000 sends in its busy hour
    other_callers: int = 4
    other_callers_per_second: float = 2.5  # all of them together
    api_containers: int = 4  # warm api containers sharing the load (Little's law at ~80 ms a send)
    sms_share: float = 0.15
    # Recipients. Shared mailboxes and on-call phones (ops@, billing@, the pager) get a tenth of a
    # caller's mail between them, the first few most of it (Zipf, s=1); the rest goes to people.
    shared_share: float = 0.10
    shared_recipients: int = 20
    # Of mail to people: a first contact (sign-up, first order) ...
    first_contact: float = 0.30
    # ... a follow-up within one flow (verify then welcome, order placed then paid, a code sent
    # again, an alert storm), seconds to minutes after the previous mail ...
    follow_up: float = 0.08
    follow_up_median_seconds: float = 45.0
    follow_up_sigma: float = 1.0
    # ... or the next mail of an ongoing relationship, days later (most mail goes to people who
    # got mail before).
    return_median_days: float = 3.0
    return_sigma: float = 1.6
    return_max_days: float = 60.0
    # Requests that are not a new send.
    replay_share: float = 0.03  # a client retrying a send with the same key (timeout, 503)
    replay_median_seconds: float = 2.0
    reset_share: float = 0.05  # POST /v1/password-resets
    reset_again_share: float = 0.10  # the same account asking again inside the window
    # Idempotency keys as apps send them.
    key_shapes: tuple[tuple[str, float], ...] = (("uuid", 0.6), ("order", 0.3), ("event_id", 0.1))
    # Params: mostly short (a name, an amount, a link), with a tail of long bodies.
    params_median_chars: float = 160.0
    params_sigma: float = 0.8
    params_min_chars: int = 50
    params_max_chars: int = 1500
    bounce_share: float = 0.02  # of email: hard bounces (the simulator's bounce address)
    complaint_share: float = 0.002
    sms_failure_share: float = 0.03  # of SMS: carrier unreachable, invalid number
    events_sampled: int = 240  # delivery events applied (new, then again as duplicates)

    def describe(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class Kind(StrEnum):
    SEND = "send"
    REPLAY = "replay"
    RESET = "reset"


class History(StrEnum):
    """What the recipient had before this send (how the model drew it)."""

    FIRST_CONTACT = "first_contact"
    FOLLOW_UP = "follow_up"
    RETURNING = "returning"
    SHARED = "shared_mailbox"


@dataclass
class Request:
    at: datetime
    kind: Kind
    caller: str
    container: int
    body: dict[str, Any]
    key: str | None = None
    counted: bool = True  # False: the recipient's earlier send, played only for its state
    history: History | None = None
    since_previous_seconds: float | None = None  # for a send to a recipient mailed before


@dataclass
class Slice:
    model: TrafficModel
    start: datetime
    end: datetime
    requests: list[Request] = field(default_factory=list)  # every request, in time order

    @property
    def counted(self) -> list[Request]:
        return [r for r in self.requests if r.counted]


# --- recipients and payloads ---------------------------------------------------------------
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_FIRST = _words(
    "maria james sofia liam olivia noah emma lucas amelia mateo isabella ethan mia aiden harper wei "
    "chloe oliver zara kenji priya omar fatima lars ingrid tomasz anna jose lucia david sarah"
)
_LAST = _words(
    "garcia smith johnson williams brown jones miller davis rodriguez martinez hernandez lopez "
    "gonzalez wilson anderson thomas taylor moore jackson martin lee perez thompson white harris "
    "nakamura kowalski oconnor van-der-berg abdullah okafor lindqvist"
)
_DOMAINS = (
    "gmail.com",
    "outlook.com",
    "yahoo.com",
    "icloud.com",
    "proton.me",
    "northwind-logistics.com",
    "contoso-finance.co.uk",
    "example-health.org",
    "acme-industries.de",
    "fabrikam.io",
)
_WORDS = _words(
    "your order has shipped and will arrive on payment received thank you for account security alert "
    "new sign in from device location if this was not you please reset password invoice is due amount "
    "balance transfer completed pending review the disk on host is full latency above threshold for "
    "service error rate rising check the dashboard customer reference ticket updated we received a "
    "request to change your email address verify within hours subscription renewed plan monthly "
    "receipt total tax card ending in expires delivery window tracking number carrier estimated"
)
_AREA_CODES = (206, 212, 213, 303, 305, 312, 404, 415, 512, 617, 646, 702, 718, 202, 215, 503, 602, 612, 713, 804)
_EVENTS = ("placed", "paid", "shipped", "delivered", "refunded")


def _address(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    local = rng.choice(
        (f"{first}.{last}", f"{first}{last[:1]}", f"{first[:1]}{last}", f"{first}.{last}{rng.randint(1, 99)}")
    )
    return f"{local}@{rng.choice(_DOMAINS)}"


def _phone(rng: random.Random, failing: bool) -> str:
    # The simulator's fictional +1 NPA 555-01XX numbers: 00-49 delivered, 50-59 unreachable, 60-69 invalid.
    last = rng.randint(50, 69) if failing else rng.randint(0, 49)
    return f"+1{rng.choice(_AREA_CODES)}55501{last:02d}"


def _text(rng: random.Random, chars: int) -> str:
    """Prose with the ids and links transactional mail carries (compresses about as English does)."""
    out: list[str] = []
    size = 0
    while size < chars:
        roll = rng.random()
        if roll < 0.06:
            token = "https://app.example.com/o/" + "".join(rng.choices(string.ascii_letters + string.digits, k=22))
        elif roll < 0.14:
            token = "".join(rng.choices(string.ascii_uppercase + string.digits, k=rng.randint(6, 14)))
        elif roll < 0.2:
            token = f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}"
        else:
            token = rng.choice(_WORDS)
        out.append(token)
        size += len(token) + 1
    return " ".join(out)[:chars].strip()


def _params_chars(model: TrafficModel, rng: random.Random) -> int:
    drawn = model.params_median_chars * math.exp(rng.gauss(0.0, model.params_sigma))
    return int(min(max(drawn, model.params_min_chars), model.params_max_chars))


def _body(model: TrafficModel, rng: random.Random, channel: str, to: str) -> dict[str, Any]:
    chars = _params_chars(model, rng)
    if channel == "sms":
        params = {"summary": _text(rng, min(chars, 140))}
        return {"channel": "sms", "to": to, "template": {"id": "alert", "version": "1"}, "params": params}
    if rng.random() < 0.5:
        params = {"summary": _text(rng, chars)}
        template = {"id": "alert", "version": "1"}
    else:
        subject = _text(rng, rng.randint(20, 60))
        params = {"subject": subject, "body": _text(rng, max(chars - len(subject), 20))}
        template = {"id": "notice", "version": "1"}
    return {"channel": "email", "to": to, "template": template, "params": params}


def _key(model: TrafficModel, rng: random.Random, body: dict[str, Any], order: list[int]) -> str | None:
    shapes, weights = zip(*model.key_shapes, strict=True)
    shape = rng.choices(shapes, weights)[0]
    if shape == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if shape == "order":
        order[0] += 1
        return f"order-{order[0]}-{rng.choice(_EVENTS)}"
    body["event_id"] = f"evt_{uuid.UUID(int=rng.getrandbits(128), version=4).hex}"
    return None  # the key is derived from event_id + template version


# --- the slice -------------------------------------------------------------------------------
@dataclass
class _Recipient:
    channel: str
    to: str
    shared: bool = False


def build(model: TrafficModel, start: datetime = SLICE_START) -> Slice:
    rng = random.Random(model.seed)
    end = start + timedelta(seconds=model.slice_seconds)
    callers = ["busy"] + [f"app{i}" for i in range(1, model.other_callers + 1)]
    rates = [model.busy_caller_per_second] + [
        model.other_callers_per_second / model.other_callers
    ] * model.other_callers
    shared = {
        caller: [_shared_recipient(rng, caller, i, model) for i in range(model.shared_recipients)] for caller in callers
    }
    zipf = [1.0 / (rank + 1) for rank in range(model.shared_recipients)]
    order = [1_040_000]
    requests: list[Request] = []
    sent: list[Request] = []  # counted sends, for replays
    for caller, rate in zip(callers, rates, strict=True):
        at = start
        while True:
            at += timedelta(seconds=rng.expovariate(rate))
            if at >= end:
                break
            roll = rng.random()
            container = rng.randrange(model.api_containers)
            if roll < model.reset_share:
                requests += _resets(model, rng, caller, at, container)
                continue
            request = _send(model, rng, caller, at, container, shared[caller], zipf, order)
            requests.append(request)
            if request.counted:
                sent.append(request)
    # Replays: a share of sends retried by their client a moment later (same key, same body).
    for original in rng.sample(sent, k=int(len(sent) * model.replay_share)):
        at = original.at + timedelta(seconds=model.replay_median_seconds * math.exp(rng.gauss(0.0, 0.8)))
        requests.append(
            Request(at, Kind.REPLAY, original.caller, rng.randrange(model.api_containers), original.body, original.key)
        )
    requests += _earlier_sends(model, rng, requests, start, order)
    requests.sort(key=lambda r: r.at)
    return Slice(model, start, end, requests)


def _shared_recipient(rng: random.Random, caller: str, index: int, model: TrafficModel) -> _Recipient:
    if rng.random() < model.sms_share:
        return _Recipient("sms", _phone(rng, failing=False), shared=True)
    team = ("ops", "billing", "oncall", "security", "finance-alerts", "platform-team")[index % 6]
    return _Recipient("email", f"{team}{index}@{caller}-corp.example.com", shared=True)


def _send(
    model: TrafficModel,
    rng: random.Random,
    caller: str,
    at: datetime,
    container: int,
    shared: list[_Recipient],
    zipf: list[float],
    order: list[int],
) -> Request:
    since: float | None
    if rng.random() < model.shared_share:
        recipient = rng.choices(shared, zipf)[0]
        history, since = History.SHARED, None  # its previous mail: the model's own earlier sends
    else:
        channel = "sms" if rng.random() < model.sms_share else "email"
        if channel == "sms":
            to = _phone(rng, failing=rng.random() < model.sms_failure_share)
        else:
            roll = rng.random()
            if roll < model.bounce_share:
                to = f"bounce+{rng.getrandbits(40):x}@simulator.amazonses.com"
            elif roll < model.bounce_share + model.complaint_share:
                to = f"complaint+{rng.getrandbits(40):x}@simulator.amazonses.com"
            else:
                to = _address(rng)
        recipient = _Recipient(channel, to)
        roll = rng.random()
        if roll < model.first_contact:
            history, since = History.FIRST_CONTACT, None
        elif roll < model.first_contact + model.follow_up:
            history = History.FOLLOW_UP
            since = model.follow_up_median_seconds * math.exp(rng.gauss(0.0, model.follow_up_sigma))
        else:
            history = History.RETURNING
            days = model.return_median_days * math.exp(rng.gauss(0.0, model.return_sigma))
            since = min(days, model.return_max_days) * 86_400.0
    body = _body(model, rng, recipient.channel, recipient.to)
    key = _key(model, rng, body, order)
    return Request(at, Kind.SEND, caller, container, body, key, history=history, since_previous_seconds=since)


def _resets(model: TrafficModel, rng: random.Random, caller: str, at: datetime, container: int) -> list[Request]:
    body = {"account_id": f"acct-{rng.getrandbits(32):08x}", "email": _address(rng)}
    found = [Request(at, Kind.RESET, caller, container, body)]
    if rng.random() < model.reset_again_share:  # "I did not get the mail": asked again a minute later
        again = at + timedelta(seconds=rng.uniform(20, 120))
        found.append(Request(again, Kind.RESET, caller, rng.randrange(model.api_containers), body))
    return found


def _earlier_sends(
    model: TrafficModel, rng: random.Random, requests: list[Request], start: datetime, order: list[int]
) -> list[Request]:
    """Each recipient's previous send, uncounted: the state a counted send meets.

    A shared mailbox's previous mail is the model's previous send to it in the slice; before its
    first one in the slice, one drawn from its own rate (the busiest get mail every second or
    so, the quietest every few minutes).
    """
    found: list[Request] = []
    last_shared: dict[tuple[str, str], datetime] = {}
    for request in sorted((r for r in requests if r.kind is Kind.SEND), key=lambda r: r.at):
        to = request.body["to"]
        if request.history is History.SHARED:
            previous = last_shared.get((request.caller, to))
            last_shared[(request.caller, to)] = request.at
            if previous is not None:
                request.since_previous_seconds = (request.at - previous).total_seconds()
                continue  # that send is itself in the slice
            request.since_previous_seconds = (request.at - start).total_seconds() + rng.expovariate(1.0 / 30.0)
        if request.since_previous_seconds is None:
            continue
        at = request.at - timedelta(seconds=request.since_previous_seconds)
        body = _body(model, rng, request.body["channel"], to)
        key = _key(model, rng, body, order)
        found.append(
            Request(at, Kind.SEND, request.caller, rng.randrange(model.api_containers), body, key, counted=False)
        )
    return found
