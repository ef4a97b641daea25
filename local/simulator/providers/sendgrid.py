"""The SendGrid side: v3 mail send, the Email Activity API, and the Signed Event Webhook.

Serves SendGrid's HTTP API shapes (tests/fixtures/provider-formats): `POST /v3/mail/send`
answers 202 with `X-Message-Id`, `GET /v3/messages?query=…` finds a send by its custom
argument. The SES mailbox-simulator addresses and the fault labels behave as under SES, in
SendGrid's event format: events are queued per send and :meth:`SendGridSide.flush` posts them
as one signed webhook batch (ECDSA P-256 over timestamp + body, with a key pair made here), as
SendGrid posts its batches every few seconds. A batch the receiver does not answer 2xx is kept
and posted again, as SendGrid retries.

:meth:`SendGridSide.handle` is the whole API, transport-free: the HTTP server in
``local/simulator/http.py`` serves it to the local stack, and tests call it in-process. `start`
wires it into the local stack: the handlers run as deployed, the adapter reading its API key from
(moto's) Secrets Manager and calling SENDGRID_API_BASE, here the simulator's HTTP server; the
simulator posts signed webhook batches to the local api, which verifies them with the public key
from Secrets Manager and queues the events for the poller.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import boto3
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from local.simulator.faults import (
    LABEL_THROTTLE,
    LABEL_TIMEOUT_ACCEPTED,
    LABEL_TIMEOUT_LOST,
    FaultCounter,
    fault_label,
    masked,
)
from local.simulator.http import Answer, Dropped, SimulatorServer
from local.simulator.providers import LocalContext, events_queue, post_webhook
from sendledger.providers.sendgrid.simulation import sendgrid_events
from sendledger.providers.simulated.rules import MailboxKind, mailbox_simulator_kind

if TYPE_CHECKING:
    from local.simulator.core import Simulator
from sendledger.domain.clock import iso
from sendledger.providers.sendgrid import NAME
from sendledger.providers.sendgrid.events import MESSAGE_ID_ARG, SIGNATURE_HEADER, TIMESTAMP_HEADER
from sendledger.providers.sendgrid.settings import (
    ENV_API_BASE,
    ENV_API_KEY_SECRET_ARN,
    ENV_EVENTS_QUEUE_URL,
    ENV_WEBHOOK_KEY_SECRET_ARN,
)

LOG = logging.getLogger("sendledger.local.simulator")

LOCAL_API_KEY = "SG.local-simulator.not-a-real-key"
MAIL_SEND = "/v3/mail/send"
MESSAGES = "/v3/messages"
RATE_LIMIT = 600
_QUERY = re.compile(r"unique_args\['" + MESSAGE_ID_ARG + r"'\]\s*=\s*\"([^\"]+)\"")


@dataclass
class Accepted:
    x_message_id: str
    message_id: str | None  # sendledger's, from custom_args
    to: str
    status: str = "processed"
    accepted_at: datetime | None = None


@dataclass
class SendGridSide:
    """SendGrid as the local stack sees it. Thread-safe; shares the outbox and faults with SES/SNS."""

    clock: Callable[[], datetime]
    faults: FaultCounter
    record: Callable[[dict[str, Any]], None]  # append one outbox entry
    api_key: str = LOCAL_API_KEY
    _key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _events: list[tuple[datetime, dict[str, Any]]] = field(default_factory=list)
    _accepted: list[Accepted] = field(default_factory=list)
    _numbers: int = 0
    # The Email Activity API's index lags the sends: a send is found only this long after it was
    # accepted (0: at once). Why a "not found" proves absence only after UNKNOWN_GRACE_SECONDS.
    index_lag_seconds: float = 0.0

    @property
    def public_key(self) -> str:
        """The verification key as SendGrid shows it: base64 of the DER SubjectPublicKeyInfo."""
        der = self._key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(der).decode()

    def reset(self) -> None:
        with self._lock:
            self._events.clear()
            self._accepted.clear()

    def pending(self) -> int:
        with self._lock:
            return len(self._events)

    # --- the HTTP API -------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        """One API request; raises Dropped when the caller must see no answer at all."""
        path = urlsplit(target).path
        lowered = {name.lower(): value for name, value in headers.items()}
        if lowered.get("authorization") != f"Bearer {self.api_key}":
            return _errors(401, "The provided authorization grant is invalid, expired, or revoked")
        if path == MAIL_SEND and method == "POST":
            return self._mail_send(body)
        if path == MESSAGES and method == "GET":
            return self._messages(target)
        return _errors(404, "resource not found")

    def _mail_send(self, body: bytes) -> Answer:
        try:
            request = json.loads(body)
            to = request["personalizations"][0]["to"][0]["email"]
            content = request["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return _errors(400, "Bad Request", field="personalizations")
        types = [part.get("type") for part in content if isinstance(part, dict)]
        if not types or types[0] != "text/plain" or any(not part.get("value") for part in content):
            return _errors(400, "The content value must be a string at least one character in length.", "content")
        fault = self.faults.before_acceptance(to)
        if fault == LABEL_TIMEOUT_LOST:
            LOG.info("simulator: a SendGrid send to %s times out before it is accepted", masked(to))
            raise Dropped(accepted=False)
        if fault == LABEL_THROTTLE:
            LOG.info("simulator: SendGrid throttles the send to %s", masked(to))
            reset = int(self.clock().timestamp()) + 1
            headers = {
                "X-RateLimit-Limit": str(RATE_LIMIT),
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": str(reset),
            }
            return _errors(429, "too many requests", headers=headers)
        accepted = self._accept(request, to)
        if fault_label(to) == LABEL_TIMEOUT_ACCEPTED:
            LOG.info("simulator: SendGrid accepted %s, the caller sees a timeout", accepted.x_message_id)
            raise Dropped(accepted=True)
        return Answer(202, {"X-Message-Id": accepted.x_message_id, "Content-Length": "0"}, b"")

    def _accept(self, request: dict[str, Any], to: str) -> Accepted:
        now = self.clock()
        text = next((part["value"] for part in request["content"] if part.get("type") == "text/plain"), "")
        html = next((part["value"] for part in request["content"] if part.get("type") == "text/html"), None)
        args = {str(k): str(v) for k, v in (request.get("custom_args") or {}).items()}
        with self._lock:
            self._numbers += 1
            number = self._numbers
            accepted = Accepted(f"SIM{secrets.token_urlsafe(16)}", args.get(MESSAGE_ID_ARG), to, accepted_at=now)
            self._accepted.append(accepted)
            self.record(
                {
                    "message_id": accepted.message_id,
                    "channel": "email",
                    "from": str((request.get("from") or {}).get("email", "")),
                    "to": to,
                    "subject": request.get("subject", ""),
                    "text": text,
                    "html": html,
                    "provider": "sendgrid",
                    "provider_message_id": accepted.x_message_id,
                    "sent_at": iso(now),
                }
            )
            self._events.extend(self._outcome(accepted, number, request, now, args))
        return accepted

    def _outcome(
        self, accepted: Accepted, number: int, request: dict[str, Any], now: datetime, args: dict[str, str]
    ) -> list[tuple[datetime, dict[str, Any]]]:
        """What SendGrid reports for one accepted send: processed, then the recipient's outcome."""
        kind = mailbox_simulator_kind(accepted.to)
        bounced = kind in (MailboxKind.BOUNCE, MailboxKind.SUPPRESSIONLIST)
        accepted.status = "not_delivered" if bounced else "delivered"  # what the Email Activity API shows
        sg_message_id = f"{accepted.x_message_id}.recvd-simulator-{number}"
        categories = request.get("categories") or []
        return sendgrid_events(
            accepted.to, accepted.x_message_id, sg_message_id, now, custom_args=args, categories=categories
        )

    def _messages(self, target: str) -> Answer:
        query = parse_qs(urlsplit(target).query).get("query", [""])[0]
        match = _QUERY.search(query)
        indexed = self.clock() - timedelta(seconds=self.index_lag_seconds)
        with self._lock:
            found = [
                a
                for a in self._accepted
                if match and a.message_id == match.group(1) and (a.accepted_at is None or a.accepted_at <= indexed)
            ]
        messages = [
            {
                "from_email": "",
                "msg_id": f"{a.x_message_id}.recvd-simulator",
                "subject": "",
                "to_email": a.to,
                "status": a.status,
                "opens_count": 0,
                "clicks_count": 0,
                "last_event_time": iso(self.clock()),
            }
            for a in found
        ]
        return Answer(200, {"Content-Type": "application/json"}, json.dumps({"messages": messages}).encode())

    # --- the Event Webhook ----------------------------------------------------------------------
    def signed(self, body: bytes) -> dict[str, str]:
        """The headers SendGrid signs a webhook POST with."""
        timestamp = str(int(self.clock().timestamp()))
        signature = self._key.sign(timestamp.encode() + body, ec.ECDSA(hashes.SHA256()))
        return {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: base64.b64encode(signature).decode(),
            TIMESTAMP_HEADER: timestamp,
        }

    def flush(self, post: Callable[[bytes, dict[str, str]], int]) -> int:
        """Post every event due by now as one signed batch; returns how many were posted."""
        now = self.clock()
        with self._lock:
            due = [item for item in self._events if item[0] <= now]
            if not due:
                return 0
            self._events = [item for item in self._events if item[0] > now]
        body = (json.dumps([record for _, record in due], separators=(",", ":")) + "\r\n").encode()
        try:
            status = post(body, self.signed(body))
        except Exception:
            LOG.exception("simulator: posting SendGrid events failed; kept for the next flush")
            status = 0
        if not 200 <= status < 300:
            LOG.warning("simulator: the SendGrid webhook answered %s; the batch is posted again", status)
            with self._lock:
                self._events = due + self._events
            return 0
        return len(due)


def _errors(status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None) -> Answer:
    body = json.dumps({"errors": [{"message": message, "field": field, "help": None}]}).encode()
    return Answer(status, {"Content-Type": "application/json", **(headers or {})}, body)


API_KEY_SECRET = "sendledger/sendgrid-api-key"  # noqa: S105 (a name)
WEBHOOK_KEY_SECRET = "sendledger/sendgrid-webhook-public-key"  # noqa: S105 (a name)
EVENTS_QUEUE = "sendledger-sendgrid-events"


@dataclass
class LocalSendGrid:
    side: SendGridSide
    server: SimulatorServer
    name: str = NAME

    @property
    def url(self) -> str:
        return self.server.url

    def flush(self, api_url: str) -> dict[str, int]:
        """SendGrid's batches: signed POSTs to the api's webhook route, before the poll drains them."""
        return {
            "sendgrid_events_posted": self.side.flush(lambda body, headers: post_webhook(api_url, NAME, body, headers))
        }

    def outbox(self) -> list[dict[str, Any]]:
        return []  # recorded in the core simulator's outbox

    def stop(self) -> None:
        self.server.stop()


def side_of(simulator: Simulator) -> SendGridSide:
    """The simulator's SendGrid, made on first use (it shares the core's outbox, clock and labels)."""
    side = simulator.sides.get(NAME)
    if side is None:
        side = simulator.sides[NAME] = SendGridSide(
            clock=simulator.now, faults=simulator.faults, record=simulator.record
        )
    assert isinstance(side, SendGridSide)
    return side


def start(context: LocalContext) -> LocalSendGrid:
    """Serve the simulated API, store its keys as secrets, create the events queue; set the wiring."""
    side = side_of(context.simulator)
    server = SimulatorServer(side.handle, NAME)
    server.start()
    secrets_manager = boto3.client("secretsmanager", region_name=context.region)
    api_key = secrets_manager.create_secret(Name=API_KEY_SECRET, SecretString=side.api_key)["ARN"]
    public_key = secrets_manager.create_secret(Name=WEBHOOK_KEY_SECRET, SecretString=side.public_key)["ARN"]
    queue_url = events_queue(context, EVENTS_QUEUE)
    context.environ.update(
        {
            ENV_API_BASE: server.url,
            ENV_API_KEY_SECRET_ARN: api_key,
            ENV_WEBHOOK_KEY_SECRET_ARN: public_key,
            ENV_EVENTS_QUEUE_URL: queue_url,
        }
    )
    return LocalSendGrid(side, server)
