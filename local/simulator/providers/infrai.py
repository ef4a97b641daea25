"""Infrai, played locally: `POST /v1/{email|sms}/send` and `GET /v1/{email|sms}/get/{id}` over HTTP.

Served as the design note states it (Bearer key, JSON bodies, `Idempotency-Key`, 429 with
`Retry-After`, records read by id) and as the slice assumes the rest (assumptions.py: the SMS
paths, the status values, a record found by its Idempotency-Key too). The mailbox-simulator
addresses, the fictional SMS numbers and the fault labels behave as under every provider, as
statuses a record reaches over time:

* ordinary addresses and ``success@``: queued, then delivered after 1.5 s;
* ``bounce@``: bounced after 2.6 s; ``suppressionlist@``: bounced after 0.3 s;
* ``complaint@``: delivered, then complained after 3 s;
* ``+1NPA55501XX``: delivered (00-49), failed (50-89), sent and never more (90-99);
* ``+timeout-accepted``: accepted, the connection dropped before the answer;
* ``+timeout-lost``: the first call dropped before Infrai accepts anything;
* ``+throttle``: the first two calls answer 429 with ``Retry-After: 1``.

The same Idempotency-Key with the same body answers the first send's answer again (nothing is
sent twice); with another body, 409.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import boto3

from local.simulator.faults import (
    LABEL_THROTTLE,
    LABEL_TIMEOUT_ACCEPTED,
    LABEL_TIMEOUT_LOST,
    fault_label,
    masked,
)
from local.simulator.http import Answer, Dropped, SimulatorServer
from local.simulator.providers import LocalContext
from sendledger.domain.clock import iso
from sendledger.providers.infrai import NAME
from sendledger.providers.infrai.settings import (
    ENV_API_BASE,
    ENV_API_KEY_SECRET_ARN,
    ENV_COMPLAINT_FIRST_READ_SECONDS,
    ENV_STATUS_INTERVAL_SECONDS,
)
from sendledger.providers.infrai.simulation import infrai_timeline, status_at

if TYPE_CHECKING:
    from local.simulator.core import Simulator

LOG = logging.getLogger("sendledger.local.simulator")

LOCAL_API_KEY = "infrai-local-simulator-key-not-secret"
API_KEY_SECRET = "sendledger/infrai-api-key"  # noqa: S105 (a name)
PREFIX = "/v1"
LOCAL_STATUS_INTERVAL_SECONDS = 1  # statuses move within seconds here (a complaint too)


@dataclass
class Sent:
    provider_id: str
    idempotency_key: str
    body_hash: str
    channel: str
    to: str
    timeline: list[tuple[datetime, str]]  # (from when, status), in order
    answer: bytes  # the first answer, given again to the same key and body
    accepted_at: datetime | None = None

    def status(self, now: datetime) -> tuple[str, datetime]:
        return status_at(self.timeline, now)


@dataclass
class InfraiSide:
    """Infrai as the local stack sees it. Thread-safe; shares the core's outbox, clock and labels."""

    simulator: Simulator
    api_key: str = LOCAL_API_KEY
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _sent: dict[str, Sent] = field(default_factory=dict)  # by provider id
    _keys: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> provider id
    calls: int = 0  # sends that reached it
    # `get` by Idempotency-Key (a timed-out send has no Infrai id) finds a send only this long
    # after it was accepted (0: at once): "not found" proves absence only after the grace.
    index_lag_seconds: float = 0.0

    def reset(self) -> None:
        with self._lock:
            self._sent.clear()
            self._keys.clear()
            self.calls = 0

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        lowered = {name.lower(): value for name, value in headers.items()}
        if not secrets.compare_digest(lowered.get("authorization", "").encode(), f"Bearer {self.api_key}".encode()):
            return _json(401, {"message": "invalid API key"})
        path = urlsplit(target).path.removeprefix(PREFIX)
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] in ("email", "sms") and parts[1] == "send" and method == "POST":
            return self._send(parts[0], lowered.get("idempotency-key", ""), body)
        if len(parts) == 3 and parts[0] in ("email", "sms") and parts[1] == "get" and method == "GET":
            return self._get(parts[0], unquote(parts[2]))
        return _json(404, {"message": "no such route"})

    def _send(self, channel: str, key: str, body: bytes) -> Answer:
        try:
            request = json.loads(body)
            to = str(request["to"])
            if not str(request["text"]):
                raise ValueError("no text")
        except (ValueError, KeyError, TypeError):
            return _json(400, {"message": "to and text are required"})
        if not key:
            return _json(400, {"message": "Idempotency-Key is required"})
        body_hash = hashlib.sha256(body).hexdigest()
        with self._lock:
            self.calls += 1
            known = self._sent.get(self._keys.get(key, ""))
        if known is not None:
            if known.body_hash != body_hash:
                return _json(409, {"message": "this Idempotency-Key was used with another request"})
            return Answer(200, {"Content-Type": "application/json"}, known.answer)  # the provider dedupes
        fault = self.simulator.faults.before_acceptance(to) if fault_label(to) else None
        if fault == LABEL_TIMEOUT_LOST:
            LOG.info("infrai simulator: a send to %s is lost before Infrai accepts it", masked(to))
            raise Dropped(accepted=False)
        if fault == LABEL_THROTTLE:
            return _json(429, {"message": "rate limited"}, {"Retry-After": "1"})
        sent = self._accept(channel, key, body_hash, to, request)
        if fault_label(to) == LABEL_TIMEOUT_ACCEPTED:
            LOG.info("infrai simulator: accepted %s, the caller sees the connection drop", sent.provider_id)
            raise Dropped(accepted=True)
        return Answer(200, {"Content-Type": "application/json"}, sent.answer)

    def _accept(self, channel: str, key: str, body_hash: str, to: str, request: dict[str, Any]) -> Sent:
        now = self.simulator.now()
        provider_id = f"ifr_{secrets.token_hex(10)}"
        answer = json.dumps({"id": provider_id, "status": "queued"}).encode()
        sent = Sent(provider_id, key, body_hash, channel, to, infrai_timeline(channel, to, now), answer, now)
        with self._lock:
            self._sent[provider_id] = sent
            self._keys[key] = provider_id
        self.simulator.record(
            {
                "message_id": key,  # sendledger's message id is the Idempotency-Key
                "channel": channel,
                "from": "",
                "to": to,
                "subject": str(request.get("subject", "")) if channel == "email" else None,
                "text": str(request.get("text", "")),
                "html": request.get("html") if channel == "email" else None,
                "provider": NAME,
                "provider_message_id": provider_id,
                "sent_at": iso(now),
            }
        )
        return sent

    def reach(self, provider_id: str, status: str) -> None:
        """The message reaches `status` now (a test's own course of events, over the address's)."""
        with self._lock:
            sent = self._sent[provider_id]
            now = self.simulator.now()
            sent.timeline = [(at, known) for at, known in sent.timeline if at <= now] + [(now, status)]

    def _get(self, channel: str, id_or_key: str) -> Answer:
        with self._lock:
            sent = self._sent.get(id_or_key) or self._by_key(id_or_key)
        if sent is None or sent.channel != channel:
            return _json(404, {"message": "not found"})
        status, at = sent.status(self.simulator.now())
        return _json(200, {"id": sent.provider_id, "status": status, "updated_at": iso(at), "to": sent.to})

    def _by_key(self, key: str) -> Sent | None:
        sent = self._sent.get(self._keys.get(key, ""))
        indexed = self.simulator.now() - timedelta(seconds=self.index_lag_seconds)
        if sent is None or (sent.accepted_at is not None and sent.accepted_at > indexed):
            return None
        return sent


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode())


def side_of(simulator: Simulator) -> InfraiSide:
    """The simulator's Infrai, made on first use."""
    side = simulator.sides.get(NAME)
    if side is None:
        side = InfraiSide(simulator)
        simulator.sides[NAME] = side
    assert isinstance(side, InfraiSide)
    return side


@dataclass
class LocalInfrai:
    side: InfraiSide
    server: SimulatorServer
    name: str = NAME

    @property
    def url(self) -> str:
        return self.server.url + PREFIX

    def flush(self, api_url: str) -> dict[str, int]:
        return {}  # nothing is pushed: the poller asks

    def outbox(self) -> list[dict[str, Any]]:
        return []  # recorded in the core simulator's outbox

    def stop(self) -> None:
        self.server.stop()


def start(context: LocalContext) -> LocalInfrai:
    """Serve the simulated API and put its key in (moto's) Secrets Manager; set the wiring."""
    side = side_of(context.simulator)
    server = SimulatorServer(side.handle, NAME)
    server.start()
    secrets_manager = boto3.client("secretsmanager", region_name=context.region)
    arn = secrets_manager.create_secret(Name=API_KEY_SECRET, SecretString=side.api_key)["ARN"]
    context.environ.update({ENV_API_BASE: server.url + PREFIX, ENV_API_KEY_SECRET_ARN: arn})
    context.environ.setdefault(ENV_STATUS_INTERVAL_SECONDS, str(LOCAL_STATUS_INTERVAL_SECONDS))
    context.environ.setdefault(ENV_COMPLAINT_FIRST_READ_SECONDS, str(LOCAL_STATUS_INTERVAL_SECONDS))
    LOG.info("infrai simulator on %s", server.url + PREFIX)
    return LocalInfrai(side, server)
