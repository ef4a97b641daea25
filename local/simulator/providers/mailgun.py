"""Mailgun, played locally: `POST /v3/{domain}/messages` and a paged Events API over HTTP.

The adapters speak to it exactly as to api.mailgun.net (Basic auth `api:<key>`, form-encoded
sends, `paging.next` URLs). The mailbox simulator addresses and fault labels behave as under
SES, in Mailgun's event format:

* ``success@``, ``ooto@`` and ordinary addresses: accepted, then delivered;
* ``bounce@``: accepted, then failed/permanent/bounce (550 5.1.1);
* ``complaint@``: accepted, delivered, then complained;
* ``suppressionlist@``: accepted, then failed/permanent/suppress-bounce (605);
* ``+timeout-accepted``: accepted, the connection dropped before the answer;
* ``+timeout-lost``: the first call's connection dropped before Mailgun accepts anything;
* ``+throttle``: the first two calls answer 429 with Mailgun's body and ``X-RateLimit-Reset``.

Events appear late, as Mailgun's do: an `accepted` event becomes visible ``late_seconds``
after its time, so it shows up behind outcomes already read. A poller that trusted recent
pages would miss it; Mailgun's finality rule (and the finality pass) does not.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from local.simulator.faults import LABEL_THROTTLE, LABEL_TIMEOUT_ACCEPTED, LABEL_TIMEOUT_LOST, FaultCounter, fault_label
from local.simulator.faults import masked as masked_address
from local.simulator.providers import LocalContext, events_queue
from sendledger.domain.clock import iso
from sendledger.providers.mailgun import NAME
from sendledger.providers.mailgun.events import MESSAGE_ID_VARIABLE
from sendledger.providers.mailgun.settings import (
    ENV_API_BASE,
    ENV_API_KEY_SECRET_ARN,
    ENV_DOMAIN,
    ENV_EVENTS_FINAL_AFTER_SECONDS,
    ENV_EVENTS_QUEUE_URL,
    ENV_SIGNING_KEY_SECRET_ARN,
)
from sendledger.providers.mailgun.simulation import MailgunSend, mailgun_outcomes

LOG = logging.getLogger("sendledger.local.simulator")

DEFAULT_DOMAIN = "mg.example.com"
LOCAL_API_KEY = "local-mailgun-api-key-not-secret"
LOCAL_SIGNING_KEY = "local-mailgun-signing-key-not-secret"
LATE_SECONDS = 3.0
PAGE_LIMIT_MAX = 300
DROP = "drop"  # answer: close the connection without a response

Clock = Callable[[], datetime]
Answer = tuple[int, dict[str, str], bytes] | str


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Stored:
    timestamp: float
    event_id: str
    visible_at: float
    item: dict[str, Any]


class EventLog:
    """The Events API's storage: items visible from `visible_at` on, searched and paged."""

    def __init__(self, base_url: str, domain: str, clock: Clock) -> None:
        self.base_url, self.domain, self.clock = base_url, domain, clock
        self._items: list[Stored] = []
        self._lock = threading.Lock()

    def add(self, item: dict[str, Any], visible_at: float) -> None:
        with self._lock:
            self._items.append(Stored(float(item["timestamp"]), str(item["id"]), visible_at, item))

    def search(self, params: Mapping[str, str]) -> dict[str, Any]:
        """`GET /v3/{domain}/events?...`: the first page of a search."""
        ascending = params.get("ascending", "").lower()
        if "end" not in params and ascending not in ("yes", "no"):
            raise ValueError("ascending must be yes or no when end is absent")
        begin, end = _epoch(params.get("begin")), _epoch(params.get("end"))
        if ascending == "":
            ascending = "yes" if begin is None or end is None or begin <= end else "no"
        if begin is not None and end is not None and (begin <= end) != (ascending == "yes"):
            raise ValueError("ascending disagrees with begin and end")
        limit = int(params.get("limit") or 100)
        if not 1 <= limit <= PAGE_LIMIT_MAX:
            raise ValueError(f"limit must be 1..{PAGE_LIMIT_MAX}")
        filters = {name: params[name] for name in ("event", "recipient", "message-id") if params.get(name)}
        query = {"begin": begin, "end": end, "asc": ascending == "yes", "limit": limit, "filters": filters}
        return self._page(query)

    def follow(self, token: str) -> dict[str, Any]:
        """`GET /v3/{domain}/events/{token}`: a page named by an earlier page's paging URL."""
        try:
            query = json.loads(base64.urlsafe_b64decode(token.encode()))
        except (binascii.Error, ValueError) as exc:
            raise ValueError("unknown paging token") from exc
        if not isinstance(query, dict) or "asc" not in query:
            raise ValueError("unknown paging token")
        return self._page(query)

    def _page(self, query: dict[str, Any]) -> dict[str, Any]:
        now = self.clock().timestamp()
        ascending, after = bool(query["asc"]), query.get("after")
        with self._lock:
            visible = [stored for stored in self._items if stored.visible_at <= now and _matches(stored, query)]
        visible.sort(key=lambda stored: (stored.timestamp, stored.event_id), reverse=not ascending)
        if after is not None:
            position = (float(after[0]), str(after[1]))
            visible = [
                stored
                for stored in visible
                if ((stored.timestamp, stored.event_id) > position) == ascending
                and (stored.timestamp, stored.event_id) != position
            ]
        page = visible[: int(query["limit"])]
        last = [page[-1].timestamp, page[-1].event_id] if page else after
        return {
            "items": [stored.item for stored in page],
            "paging": {
                "next": self._url({**query, "after": last}),
                "previous": self._url({**query, "asc": not ascending, "after": after}),
                "first": self._url({**query, "after": None}),
                "last": self._url({**query, "asc": not ascending, "after": None}),
            },
        }

    def _url(self, query: dict[str, Any]) -> str:
        token = base64.urlsafe_b64encode(json.dumps(query, sort_keys=True).encode()).decode()
        return f"{self.base_url}/v3/{self.domain}/events/{token}"


def _matches(stored: Stored, query: dict[str, Any]) -> bool:
    begin, end, ascending = query.get("begin"), query.get("end"), query["asc"]
    low, high = (begin, end) if ascending else (end, begin)
    if low is not None and stored.timestamp < low:
        return False
    if high is not None and stored.timestamp > high:
        return False
    item, filters = stored.item, query.get("filters") or {}
    if "event" in filters and item.get("event") not in {term.strip() for term in filters["event"].split(" OR ")}:
        return False
    if "recipient" in filters and str(item.get("recipient", "")).lower() != filters["recipient"].lower():
        return False
    headers = (item.get("message") or {}).get("headers") or {}
    return "message-id" not in filters or headers.get("message-id") == filters["message-id"]


def _epoch(raw: str | None) -> float | None:
    return float(raw) if raw not in (None, "") else None


class MailgunSimulator:
    """Mailgun's messages and Events APIs, the outbox of what it accepted. Thread-safe."""

    def __init__(
        self,
        *,
        domain: str = DEFAULT_DOMAIN,
        api_key: str = LOCAL_API_KEY,
        clock: Clock = utc_now,
        late_seconds: float = LATE_SECONDS,
        base_url: str = "http://127.0.0.1:0",
    ) -> None:
        self.domain, self.api_key, self.clock, self.late_seconds = domain, api_key, clock, late_seconds
        self.events = EventLog(base_url, domain, self.now)
        self._faults = FaultCounter()
        self._outbox: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.calls = 0  # POST /messages requests that reached the simulator
        # The Events API's index lags the sends: no event of a send is listed before this long
        # after it was accepted (0: each at its own time).
        self.index_lag_seconds = 0.0

    def now(self) -> datetime:
        return self.clock()  # read at every call: tests may swap the clock

    # --- views ------------------------------------------------------------------------------
    def outbox(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(entry) for entry in self._outbox]

    # --- HTTP ---------------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """One request, as Mailgun would answer it (or DROP)."""
        split = urlsplit(target)
        parts = split.path.strip("/").split("/")
        if len(parts) < 3 or parts[0] != "v3":
            return _json(404, {"message": "Not Found"})
        if not self._authorised(headers):
            return 401, {}, b"Forbidden"
        if parts[1] != self.domain:
            return _json(404, {"message": f"Domain not found: {parts[1]}"})
        try:
            if method == "POST" and parts[2:] == ["messages"]:
                return self._send(parse_qs(body.decode("utf-8"), keep_blank_values=True))
            if method == "GET" and parts[2] == "events" and len(parts) == 3:
                query = {name: values[-1] for name, values in parse_qs(split.query).items()}
                return _json(200, self.events.search(query))
            if method == "GET" and parts[2] == "events" and len(parts) == 4:
                return _json(200, self.events.follow(parts[3]))
        except (ValueError, UnicodeDecodeError) as exc:
            return _json(400, {"message": str(exc)})
        return _json(404, {"message": "Not Found"})

    def _authorised(self, headers: Mapping[str, str]) -> bool:
        value = next((value for name, value in headers.items() if name.lower() == "authorization"), "")
        expected = "Basic " + base64.b64encode(f"api:{self.api_key}".encode()).decode()
        return secrets.compare_digest(value.encode(), expected.encode())

    def _send(self, form: dict[str, list[str]]) -> Answer:
        to = (form.get("to") or [""])[0]
        if "@" not in to:
            return _json(400, {"message": "'to' parameter is not a valid address. please check documentation"})
        if not any(form.get(name) for name in ("text", "html", "template")):
            return _json(400, {"message": "Need at least one of 'text', 'html' or 'template' parameters specified"})
        with self._lock:
            self.calls += 1
        fault = self._faults.before_acceptance(to) if fault_label(to) else None
        now = self.clock()
        if fault == LABEL_TIMEOUT_LOST:
            LOG.info("mailgun simulator: a send to %s is lost before Mailgun accepts it", masked_address(to))
            return DROP
        if fault == LABEL_THROTTLE:
            reset = int(now.timestamp()) + 1
            limit = "account-requests-per-sec limit exceeded, try again after 1 seconds"
            body = {"message": f"Domain {self.domain} is not allowed to send: {limit}"}
            return _json(429, body, {"X-RateLimit-Reset": str(reset)})
        provider_id = f"{now.strftime('%Y%m%d%H%M%S')}.{secrets.token_hex(8)}@{self.domain}"
        self._accept(form, to, provider_id, now)
        if fault_label(to) == LABEL_TIMEOUT_ACCEPTED:
            LOG.info("mailgun simulator: accepted %s, the caller sees the connection drop", provider_id)
            return DROP
        return _json(200, {"id": f"<{provider_id}>", "message": "Queued. Thank you."})

    def _accept(self, form: dict[str, list[str]], to: str, provider_id: str, now: datetime) -> None:
        variables = {name[2:]: values[-1] for name, values in form.items() if name.startswith("v:")}
        first = {name: values[0] for name, values in form.items()}
        with self._lock:
            self._outbox.append(
                {
                    "message_id": variables.get(MESSAGE_ID_VARIABLE),
                    "channel": "email",
                    "from": first.get("from", ""),
                    "to": to,
                    "subject": first.get("subject", ""),
                    "text": first.get("text", ""),
                    "html": first.get("html"),
                    "provider": "mailgun",
                    "provider_message_id": provider_id,
                    "sent_at": iso(now),
                }
            )
        base = now.timestamp()
        send = MailgunSend(
            to, provider_id, variables, form.get("o:tag") or [], first.get("subject", ""), first.get("from", "")
        )
        listed = base + self.index_lag_seconds
        self.events.add(send.item("accepted", base), visible_at=max(base + self.late_seconds, listed))
        for offset, item in mailgun_outcomes(send, base):
            self.events.add(item, visible_at=max(base + offset, listed))

    # --- server -------------------------------------------------------------------------------
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Start the HTTP server on a thread; returns its base URL (the `MAILGUN_API_BASE`)."""
        simulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                LOG.debug("mailgun simulator: " + format, *args)

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                answer = simulator.handle(self.command, self.path, dict(self.headers.items()), body)
                if answer == DROP:
                    self.close_connection = True
                    return
                assert not isinstance(answer, str)
                status, headers, payload = answer
                self.send_response(status)
                for name, value in {"Content-Length": str(len(payload)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _answer

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        url = f"http://{host}:{self._server.server_address[1]}"
        self.events.base_url = url
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="mailgun-simulator", daemon=True
        ).start()
        return url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()


LOCAL_FINAL_AFTER_SECONDS = 10  # a few times LATE_SECONDS: the finality rule still matters locally
EVENTS_QUEUE = "sendledger-mailgun-events"  # verified webhook events


@dataclass
class LocalMailgun:
    simulator: MailgunSimulator
    url: str
    name: str = NAME

    def flush(self, api_url: str) -> dict[str, int]:
        return {}  # nothing is pushed: the poller pulls the Events API

    def outbox(self) -> list[dict[str, Any]]:
        return self.simulator.outbox()

    def stop(self) -> None:
        self.simulator.stop()


def start(context: LocalContext) -> LocalMailgun:
    """The local stack's Mailgun: served on a free port, its keys in (moto's) Secrets Manager.

    Sets the settings the Lambdas read (an explicit value in the environment wins).
    """

    def clock() -> datetime:
        return context.simulator.clock()  # read at every call: tests may swap the core's clock

    simulator = start_local(context.environ, context.region, clock=clock)
    context.environ.setdefault(ENV_EVENTS_QUEUE_URL, events_queue(context, EVENTS_QUEUE))
    return LocalMailgun(simulator, context.environ[ENV_API_BASE])


def start_local(environ: Any, region: str, session: Any = None, clock: Clock = utc_now) -> MailgunSimulator:
    import boto3

    simulator = MailgunSimulator(domain=environ.get(ENV_DOMAIN) or DEFAULT_DOMAIN, clock=clock)
    url = simulator.serve()
    secrets_manager = (session or boto3.session.Session()).client("secretsmanager", region_name=region)
    arns = {}
    for variable, name, value in (
        (ENV_API_KEY_SECRET_ARN, "sendledger/mailgun-api-key", simulator.api_key),
        (ENV_SIGNING_KEY_SECRET_ARN, "sendledger/mailgun-webhook-signing-key", LOCAL_SIGNING_KEY),
    ):
        arns[variable] = secrets_manager.create_secret(Name=name, SecretString=value)["ARN"]
    environ[ENV_API_BASE] = url
    environ.setdefault(ENV_DOMAIN, simulator.domain)
    environ.setdefault(ENV_EVENTS_FINAL_AFTER_SECONDS, str(LOCAL_FINAL_AFTER_SECONDS))
    for variable, arn in arns.items():
        environ.setdefault(variable, arn)
    LOG.info("mailgun simulator on %s (domain %s)", url, simulator.domain)
    return simulator
