"""The reliability suite's provider legs: its fault schedules and state machine, per email provider.

A leg is one email provider wired into the shared world (tests/providers/worlds.py builds it: the
provider's adapter against its simulator, its events reaching sendledger by the provider's own
path), and what the suite asks of it:

- ``faults``: the provider call's fault hooks. SES: the botocore hooks on SESv2 SendEmail. The
  HTTP providers: ``HttpFaults`` around the adapter's transport, where the suite's ``Fault`` on
  ``SendEmail`` hits the POST that sends, with the same actions (a crash before the call, a
  connection or read timeout, an error answer, a crash once the provider answered);
- ``emails_to(address)``: what the provider really accepted (moto's SES backend, or the
  simulator's outbox): the ground truth of "sent at most once";
- ``emit()`` / ``pending()``: the provider's own events for everything it accepted reach sendledger
  (SES through SNS and its queue, SendGrid's signed webhook, Mailgun's Events API read by the
  poller, Infrai's status asked by the poller);
- ``publish(kind, message_id, to, event_key)``: one event the state machine chooses (Send,
  Delivery, Bounce, Complaint) in the provider's own format, by the provider's own path; the same
  ``event_key`` is the same provider event again (a duplicate delivery).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

import boto3
from botocore.exceptions import ConnectTimeoutError as SdkConnectTimeout
from botocore.exceptions import ReadTimeoutError as SdkReadTimeout
from urllib3.exceptions import ConnectTimeoutError, ReadTimeoutError

from sendledger import names
from sendledger.domain.provider import Provider, carriers
from sendledger.domain.recipients import Channel
from sendledger.providers.http import Http, HttpAnswer
from tests.integration.conftest import ses_record
from tests.providers.worlds import MAILGUN_FINAL_AFTER_SECONDS, Parts, infrai_world, mailgun_world, sendgrid_world
from tests.reliability.faults import Arming, Fault, LedgerWatch, ledger_at_call
from tests.support.outbox import sent_emails

if TYPE_CHECKING:
    from tests.reliability.conftest import SharedWorld

SEND = "SendEmail"  # the suite's name for the provider call that sends, whichever provider
LEGS = tuple(provider.value for provider in carriers(Channel.EMAIL))


class Leg(Protocol):
    name: str
    faults: Any  # Hooks or HttpFaults: arm / disarm / armed, and the requests seen
    sources: tuple[str, ...]  # the watermarks a healthy pipeline keeps fresh
    queues: tuple[str, ...]  # the provider's own events queues (emptied between schedules)
    # The poll cycle itself reads the provider's events (Mailgun's Events API, Infrai's status):
    # an accepted mail may settle at any poll, not only once the provider pushes its events.
    pulls_events: bool

    def emails_to(self, address: str) -> list[Any]: ...

    def outbox(self) -> list[dict[str, Any]]:
        """The simulator's entries of everything the provider accepted, oldest first."""

    def emit(self) -> None: ...

    def pending(self) -> int: ...

    def publish(self, kind: str, message_id: str, to: str, event_key: str) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Mail:
    """One accepted email as the suite reads it (`body` holds the text a reset link is read from)."""

    to: str
    body: str


# --- faults on an HTTP provider's transport ----------------------------------------------------
@dataclass
class HttpFaults(Arming):
    """The suite's Fault hooks over an HTTP provider's transport (the Hooks interface, for POSTs).

    A send-stage fault acts before the request reaches the provider (nothing is accepted); an
    after-stage fault once the provider answered (the answer is lost on the way back). Every
    acceptance is reported to the run's LedgerWatch with what the ledger held at that moment.
    """

    watch: Callable[[], LedgerWatch]
    accepted: Callable[[], list[dict[str, Any]]] = list  # the provider's outbox, oldest first (set once built)
    inner: Http | None = None
    faults: list[Fault] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def around(self, http: Http) -> Http:
        self.inner = http
        return self

    def close(self) -> None:
        self.disarm()

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        assert self.inner is not None
        if method != "POST":  # a lookup or an events read: never faulted here
            return self.inner.request(method, url, body=body, headers=headers)
        self.calls[SEND] += 1
        self.requests.append((SEND, {"url": url}))
        armed = [f for f in self.faults if f.operation == SEND and f.call in (None, self.calls[SEND])]
        for fault in (f for f in armed if f.stage == "send"):
            if fault.attempts is not None and fault.fired >= fault.attempts:
                continue
            fault.fired += 1
            answer = _as_http(fault.action, url)
            if answer is not None:
                return answer
        seen = len(self.accepted())
        try:
            answer = self.inner.request(method, url, body=body, headers=headers)
        finally:
            for entry in self.accepted()[seen:]:
                self.watch().provider_calls.append(ledger_at_call(entry.get("message_id"), str(entry["to"])))
        for fault in (f for f in armed if f.stage == "after"):
            fault.fired += 1
            fault.action()
        return answer


def _as_http(action: Callable[..., Any], url: str) -> HttpAnswer | None:
    """A Fault action written for botocore, as an HTTP client meets it."""
    try:
        result = action(request=SimpleNamespace(url=url, body=b""))
    except SdkConnectTimeout:
        raise ConnectTimeoutError(f"injected connect timeout to {url}") from None
    except SdkReadTimeout:
        raise ReadTimeoutError(None, url, "injected read timeout") from None  # type: ignore[arg-type]
    if result is None:
        return None
    return HttpAnswer(result.status_code, {k.lower(): v for k, v in result.headers.items()}, result.content)


# --- the legs ------------------------------------------------------------------------------
@dataclass
class SesLeg:
    world: SharedWorld
    name: str = "ses"
    sources: tuple[str, ...] = ("ses", "sms")
    queues: tuple[str, ...] = ()
    pulls_events: bool = False

    @property
    def faults(self) -> Any:
        return self.world.ses

    def emails_to(self, address: str) -> list[Any]:
        return [m for m in sent_emails() if address in (m.destinations.get("ToAddresses") or [])]

    def outbox(self) -> list[dict[str, Any]]:
        return self.world.simulator.outbox()

    def emit(self) -> None:
        self.world.simulator.flush()  # SES records → SNS → the SES events queue

    def pending(self) -> int:
        return self.world.simulator.pending()["ses_events"]

    def publish(self, kind: str, message_id: str, to: str, event_key: str) -> dict[str, Any]:
        record = ses_record(kind, message_id, to, self.world.clock.now(), feedback_id=event_key)
        if kind == "Send":
            record["mail"]["messageId"] = f"ses-{event_key}"
        self.world.ingestion.publish(record)
        return record

    def close(self) -> None:
        """The shared world closes the SES hooks."""


@dataclass
class HttpLeg:
    """What the HTTP providers' legs share: faults on the transport, the simulator's outbox."""

    world: SharedWorld
    faults: HttpFaults
    built: Any  # the provider world (tests/providers/worlds.py)
    name: str
    sources: tuple[str, ...]
    queues: tuple[str, ...] = ()
    pulls_events: bool = False

    def emails_to(self, address: str) -> list[Any]:
        return [Mail(e["to"], str(e.get("text") or "")) for e in self.outbox() if e["to"] == address]

    def outbox(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = self.built.outbox()
        return entries

    def emit(self) -> None:
        self.built.emit()

    def pending(self) -> int:
        return 0  # nothing waits to be pushed: the poller asks the provider

    def provider_id(self, message_id: str) -> str:
        found = [e for e in self.built.outbox() if e.get("message_id") == message_id]
        return str(found[-1]["provider_message_id"]) if found else f"unaccepted-{message_id}"

    def close(self) -> None:
        close = getattr(self.built, "close", None)
        if close is not None:
            close()


def event_id(event_key: str) -> str:
    return hashlib.sha256(event_key.encode()).hexdigest()[:22]


class SendGridLeg(HttpLeg):
    def pending(self) -> int:
        from local.simulator.providers.sendgrid import side_of

        return side_of(self.world.simulator).pending()

    def publish(self, kind: str, message_id: str, to: str, event_key: str) -> dict[str, Any]:
        from local.simulator.providers.sendgrid import side_of
        from sendledger.providers.sendgrid.events import ESCALATES_ARG, MESSAGE_ID_ARG

        name, extra = {
            "Send": ("processed", {}),
            "Delivery": ("delivered", {"response": "250 2.0.0 OK"}),
            "Bounce": ("bounce", {"type": "bounce", "status": "5.1.1", "reason": "550 5.1.1 user unknown"}),
            "Complaint": ("spamreport", {}),
        }[kind]
        event = {
            "email": to,
            "event": name,
            "timestamp": int(self.world.clock.now().timestamp()),
            "sg_event_id": event_id(event_key),
            "sg_message_id": f"{self.provider_id(message_id)}.filter0001",
            MESSAGE_ID_ARG: message_id,
            ESCALATES_ARG: "0",
            **extra,
        }
        body = json.dumps([event]).encode()
        status = self.built.post(body, side_of(self.world.simulator).signed(body))
        assert status == 200, status
        return event


class MailgunLeg(HttpLeg):
    def publish(self, kind: str, message_id: str, to: str, event_key: str) -> dict[str, Any]:
        from local.simulator.providers.mailgun import LOCAL_SIGNING_KEY
        from sendledger.providers.mailgun.events import MESSAGE_ID_VARIABLE
        from sendledger.providers.mailgun.signature import expected_signature

        bounce = {"code": 550, "enhanced-code": "5.1.1", "message": "5.1.1 user unknown", "attempt-no": 1}
        name, extra = {
            "Send": ("accepted", {}),
            "Delivery": ("delivered", {"delivery-status": {"code": 250, "message": "OK"}}),
            "Bounce": ("failed", {"severity": "permanent", "reason": "bounce", "delivery-status": bounce}),
            "Complaint": ("complained", {}),
        }[kind]
        now = self.world.clock.now().timestamp()
        item = {
            "event": name,
            "id": event_id(event_key),
            "timestamp": now,
            "recipient": to,
            "user-variables": {MESSAGE_ID_VARIABLE: message_id},
            "message": {"headers": {"message-id": self.provider_id(message_id), "to": to}},
            **extra,
        }
        timestamp, token = str(int(now)), secrets.token_hex(25)  # a fresh signature per POST
        signature = expected_signature(LOCAL_SIGNING_KEY.encode(), timestamp, token)
        signed = {"timestamp": timestamp, "token": token, "signature": signature}
        body = json.dumps({"signature": signed, "event-data": item})
        status, _, answer = self.world.client.api("POST", names.webhook_path("mailgun"), raw_body=body)
        assert status == 200, (status, answer)
        return item


class InfraiLeg(HttpLeg):
    def publish(self, kind: str, message_id: str, to: str, event_key: str) -> dict[str, Any]:
        """Infrai pushes nothing: the message reaches the status the poller reads next (a duplicate
        is the same status again, which the status lane reads once)."""
        from local.simulator.providers.infrai import side_of

        status = {"Send": None, "Delivery": "delivered", "Bounce": "bounced", "Complaint": "complained"}[kind]
        provider_id = self.provider_id(message_id)
        if status is not None and not provider_id.startswith("unaccepted-"):
            side_of(self.world.simulator).reach(provider_id, status)
        return {"id": provider_id, "status": status}


def build_leg(provider: str, world: SharedWorld) -> Leg:
    """`provider`'s leg in the shared world (its settings, adapter and lanes replace SES's)."""
    if provider == Provider.SES.value:
        return SesLeg(world)
    services = world.services
    services.settings = services.settings.replace({"email_provider": Provider(provider)})
    parts = Parts(services, world.client.api, world.ingestion, world.simulator, world.clock)
    leg: HttpLeg
    faults = HttpFaults(watch=lambda: world.watch)
    sources = (provider, "sms")
    if provider == Provider.SENDGRID.value:
        built: Any = sendgrid_world(parts, wrap=faults.around)
        leg = SendGridLeg(world, faults, built, provider, sources, (built.queue_url,))
    elif provider == Provider.MAILGUN.value:
        built = mailgun_world(parts, wrap=faults.around, webhooks=True)
        from sendledger.providers.mailgun.settings import MailgunSettings

        queue = services.settings.provider(MailgunSettings).events_queue_url
        leg = MailgunLeg(world, faults, built, provider, sources, (queue,), pulls_events=True)
    elif provider == Provider.INFRAI.value:
        built = infrai_world(parts, wrap=faults.around)
        leg = InfraiLeg(world, faults, built, provider, sources, pulls_events=True)
    else:
        raise ValueError(f"no reliability leg for {provider!r}: add one here")
    faults.accepted = built.outbox
    return leg


def drain(queue_url: str) -> None:
    sqs = boto3.client("sqs")
    while batch := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages"):
        for message in batch:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


# --- a lookup whose index lags the sends ------------------------------------------------------
INDEX_LAG_SECONDS = 450  # half of UNKNOWN_GRACE_SECONDS (900 in the shared world): inside the grace


def index_lag(leg: str) -> float:
    """Mailgun's events are final after events_final_after_seconds: its index lags no longer (a
    later listing is lost by its contract), and its "not found" inside the grace is a lost send's."""
    return MAILGUN_FINAL_AFTER_SECONDS if leg == Provider.MAILGUN.value else INDEX_LAG_SECONDS


@contextmanager
def lagging_index(leg: Leg, seconds: float) -> Iterator[None]:
    """The provider's lookup finds a send only `seconds` after it accepted it, for the block.

    SendGrid's Email Activity (wired here, as its email_activity setting deploys it) and Infrai's
    `get` by key answer "not found" meanwhile; Mailgun's Events API lists none of its events.
    """
    from local.simulator.providers.infrai import side_of as infrai_side
    from local.simulator.providers.sendgrid import side_of as sendgrid_side

    assert isinstance(leg, HttpLeg), "SES has no lookup: absence is its watermark's alone"
    lookups = leg.world.ingestion.services.lookups
    if isinstance(leg, SendGridLeg):
        side: Any = sendgrid_side(leg.world.simulator)
        lookups[Provider.SENDGRID.value] = _email_activity(leg)
    elif isinstance(leg, InfraiLeg):
        side = infrai_side(leg.world.simulator)
    else:
        side = leg.built.mailgun
    before, side.index_lag_seconds = side.index_lag_seconds, seconds
    try:
        yield
    finally:
        side.index_lag_seconds = before
        if isinstance(leg, SendGridLeg):
            del lookups[Provider.SENDGRID.value]


def _email_activity(leg: HttpLeg) -> Any:
    from sendledger.adapters.secrets import provider_secret
    from sendledger.providers.sendgrid.lookup import SendGridEmailActivity
    from sendledger.providers.sendgrid.settings import SendGridSettings

    fragment = leg.world.services.settings.provider(SendGridSettings)
    arn = fragment.api_key_secret_arn
    return SendGridEmailActivity(fragment.api_base, lambda: provider_secret(arn), leg.built.http)
