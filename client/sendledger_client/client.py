"""The sendledger API as typed calls.

A logical call may take several HTTP attempts: a 409 (the same key still in flight) or a 503
(nothing was done) is tried again after its `Retry-After`, and a send answered `pending` is
looked at again after its `Retry-After`, as long as the caller's deadline allows. A send's
`Idempotency-Key` is made once per logical call and sent on every attempt, so a retry can
never send twice.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urljoin

from sendledger_client.errors import DeadlineExceeded, ProblemError
from sendledger_client.transport import Request, Response, Transport, checked_endpoint, transport_for

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"
RETRY_STATUSES = frozenset({409, 503})
WAIT_STATES = frozenset({"pending"})
DEFAULT_WAIT_SECONDS = 1.0

View = dict[str, Any]


@dataclass(frozen=True)
class Page:
    """One page of the evidence export: its message views and where the next one is."""

    messages: list[View]
    next_url: str | None


@dataclass
class SendledgerClient:
    endpoint: str = DEFAULT_ENDPOINT
    transport: Transport | None = None
    deadline_seconds: float = 30.0  # how long one logical call may keep waiting on Retry-After
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    new_key: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))

    def __post_init__(self) -> None:
        self.endpoint = checked_endpoint(self.endpoint).rstrip("/")
        if self.transport is None:
            self.transport = transport_for(self.endpoint)

    @classmethod
    def connect(
        cls,
        endpoint: str = DEFAULT_ENDPOINT,
        region: str | None = None,
        profile: str | None = None,
        *,
        sign: bool | None = None,
        **options: Any,
    ) -> SendledgerClient:
        """SigV4-signed unless the endpoint is local; `sign=True` signs a local one too."""
        return cls(endpoint, transport_for(endpoint, region, profile, sign=sign), **options)

    # --- messages ----------------------------------------------------------------------------
    def send(
        self,
        channel: str,
        to: str,
        template_id: str,
        template_version: str = "1",
        params: dict[str, str] | None = None,
        *,
        category: str | None = None,
        event_id: str | None = None,
        idempotency_key: str | None = None,
        wait: bool = True,
        provider: str | None = None,
        locale: str | None = None,
    ) -> View:
        """POST /v1/messages. Without `event_id` or a key of the caller's, a fresh key is made
        for this call. `wait`: a `pending` answer is looked at again until it moves on.
        `provider`: one of the deployment's enabled providers for the channel."""
        body: dict[str, Any] = {
            "channel": channel,
            "to": to,
            "template": {"id": template_id, "version": template_version, **({"locale": locale} if locale else {})},
            "params": params or {},
        }
        if category:
            body["category"] = category
        if event_id:
            body["event_id"] = event_id
        if provider:
            body["provider"] = provider
        headers = {}
        if idempotency_key or not event_id:
            headers["Idempotency-Key"] = idempotency_key or self.new_key()
        started = self.clock()
        view = _as_view(self._call("POST", "/v1/messages", body=body, headers=headers, started=started))
        while wait and view.get("state") in WAIT_STATES:
            self._wait(started, _seconds(view.get("retry_after_seconds")), 202, view)
            view = _as_view(self._call("GET", f"/v1/messages/{quote(view['message_id'], safe='')}", started=started))
        return view

    def message(self, message_id: str) -> View:
        return self._get(f"/v1/messages/{quote(message_id, safe='')}")

    def find(
        self, idempotency_key: str | None = None, event_id: str | None = None, template_version: str | None = None
    ) -> View:
        query = {"idempotency_key": idempotency_key, "event_id": event_id, "template_version": template_version}
        return self._get("/v1/messages?" + _query({k: v for k, v in query.items() if v is not None}))

    def reset(self, reset_id: str) -> View:
        return self._get(f"/v1/password-resets/{quote(reset_id, safe='')}")

    def request_reset(self, account_id: str, email: str, provider: str | None = None) -> View:
        """POST /v1/password-resets; `provider`: one of the deployment's enabled email providers."""
        body = {"account_id": account_id, "email": email, **({"provider": provider} if provider else {})}
        return _as_view(self._call("POST", "/v1/password-resets", body=body))

    def consume_reset(self, account_id: str, token: str) -> int:
        """POST /v1/password-resets/consume: the status alone (200 consumed, 400 refused)."""
        try:
            self._call("POST", "/v1/password-resets/consume", body={"account_id": account_id, "token": token})
        except ProblemError as problem:
            if problem.status >= 500:
                raise
            status: int = problem.status
            return status
        return 200

    # --- evidence export ---------------------------------------------------------------------
    def export_pages(self, since: str, until: str, limit: int | None = None) -> Iterator[Page]:
        """Every page of GET /v1/evidence, following `Link: <...>; rel="next"`."""
        query: dict[str, Any] = {"since": since, "until": until}
        if limit is not None:
            query["limit"] = limit
        url: str | None = f"{self.endpoint}/v1/evidence?{_query(query)}"
        while url is not None:
            response = self._attempts(Request("GET", url, {"Accept": "application/x-ndjson"}), self.clock())
            lines = [json.loads(line) for line in response.text().splitlines() if line.strip()]
            url = _next_link(url, response.headers.get("link"))
            yield Page(lines, url)

    def export(self, since: str, until: str, limit: int | None = None) -> Iterator[View]:
        for page in self.export_pages(since, until, limit):
            yield from page.messages

    # --- suppressions ------------------------------------------------------------------------
    def suppression(self, recipient: str) -> View:
        """Your view: state, reason class, since, version, and what your own messages caused."""
        return self._get(f"/v1/suppressions/{quote(recipient, safe='')}")

    def admin_suppression(self, recipient: str) -> View:
        """The admin's view (admin grant): every entry, with its actor and reason."""
        return self._get(f"/v1/admin/suppressions/{quote(recipient, safe='')}")

    def suppress(self, recipient: str, reason: str) -> View:
        path = f"/v1/admin/suppressions/{quote(recipient, safe='')}"
        return _as_view(self._call("PUT", path, body={"reason": reason}))

    def unsuppress(self, recipient: str, reason: str) -> View:
        path = f"/v1/admin/suppressions/{quote(recipient, safe='')}?{_query({'reason': reason})}"
        return _as_view(self._call("DELETE", path))

    # --- templates ---------------------------------------------------------------------------
    def templates(self, template_id: str | None = None) -> View:
        """Your versions and the deployment's (of one id, or all): `{"templates": [...]}`."""
        return self._get("/v1/templates" + (f"/{quote(template_id, safe='')}" if template_id else ""))

    def template_version(self, template_id: str, version: str) -> View:
        return self._get(_version_path(template_id, version))

    def publish_template(self, template_id: str, version: str, body: dict[str, Any]) -> tuple[int, View]:
        """PUT a version: (201, view) when written, (200, view) when the same body was there;
        a ProblemError for another body (409 template-version-exists) or a bad one (422)."""
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        request = Request(
            "PUT", f"{self.endpoint}{_version_path(template_id, version)}", headers, json.dumps(body).encode()
        )
        # A 409 here is final (another body holds the version): never waited on like an in-flight key.
        response = self._attempts(request, self.clock(), retry=False)
        return response.status, _as_view(response.json())

    def preview_template(
        self,
        template_id: str,
        version: str,
        params: dict[str, str],
        channel: str = "email",
        locale: str | None = None,
    ) -> View:
        body = {"channel": channel, "params": params, **({"locale": locale} if locale else {})}
        return _as_view(self._call("POST", _version_path(template_id, version) + "/preview", body=body))

    def retire_template(self, template_id: str, version: str) -> View:
        return _as_view(self._call("POST", _version_path(template_id, version) + "/retire"))

    # --- caller settings (admin) -------------------------------------------------------------
    def caller(self, caller_id: str) -> View:
        return self._get(f"/v1/admin/callers/{quote(caller_id, safe='')}")

    def find_caller(self, principal: str) -> View:
        """The caller a principal ARN signs for (a role session's: its role's), with its settings."""
        return self._get(f"/v1/admin/callers?{_query({'principal': principal})}")

    def set_caller(self, caller_id: str, changes: dict[str, Any]) -> View:
        """Change the fields named (`callback_url` None: no callbacks); the answer's `new_secret`
        is the caller's first callback secret when this call made it (shown once)."""
        return _as_view(self._call("PUT", f"/v1/admin/callers/{quote(caller_id, safe='')}", body=changes))

    def rotate_caller_secret(self, caller_id: str) -> View:
        return _as_view(self._call("POST", f"/v1/admin/callers/{quote(caller_id, safe='')}/secret"))

    def end_caller_rotation(self, caller_id: str) -> View:
        """Refused (409, with Retry-After) until the callbacks have the new secret: not waited for."""
        path = f"/v1/admin/callers/{quote(caller_id, safe='')}/secret/previous"
        return _as_view(self._call("DELETE", path, retry=False))

    # --- the local stack only ----------------------------------------------------------------
    def outbox(self) -> Any:
        return self._call("GET", "/local/outbox")

    def events(self) -> Any:
        return self._call("GET", "/local/events")

    def poll(self) -> Any:
        return self._call("POST", "/local/poll")

    # --- HTTP --------------------------------------------------------------------------------
    def _get(self, path: str) -> View:
        return _as_view(self._call("GET", path))

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        started: float | None = None,
        retry: bool = True,
    ) -> Any:
        all_headers = {"Accept": "application/json", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        request = Request(method, f"{self.endpoint}{path}", all_headers, data)
        return self._attempts(request, self.clock() if started is None else started, retry).json()

    def _attempts(self, request: Request, started: float, retry: bool = True) -> Response:
        """The same request (same Idempotency-Key) until it is answered for good or time is up."""
        assert self.transport is not None
        while True:
            response = self.transport.send(request)
            if response.status < 400:
                return response
            body = _body(response)
            if not retry or response.status not in RETRY_STATUSES:
                raise ProblemError.from_answer(response.status, body)
            self._wait(started, _seconds(response.headers.get("retry-after")), response.status, body)

    def _wait(self, started: float, seconds: float, status: int, body: Any) -> None:
        if self.clock() + seconds - started > self.deadline_seconds:
            detail = f"still {body.get('state') if status < 400 and isinstance(body, dict) else status}"
            raise DeadlineExceeded(f"{detail} after {self.deadline_seconds:g} s", status, body)
        self.sleep(seconds)


def _version_path(template_id: str, version: str) -> str:
    return f"/v1/templates/{quote(template_id, safe='')}/versions/{quote(version, safe='')}"


def _query(values: dict[str, Any]) -> str:
    """A query string percent-encoded as RFC 3986 says (a space is %20, a plus %2B), never
    form-encoded: the API decodes both, but only this form is what SigV4 signs canonically."""
    return urlencode(values, quote_via=quote)


def _as_view(value: Any) -> View:
    if not isinstance(value, dict):
        raise ProblemError(502, "Bad Gateway", "the API answered something other than a JSON object")
    return value


def _seconds(value: Any) -> float:
    """Retry-After in seconds (an HTTP date is not sent by this API: the default stands in)."""
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return DEFAULT_WAIT_SECONDS


def _body(response: Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text()


def _next_link(current: str, header: str | None) -> str | None:
    """The rel="next" target of a Link header, resolved against the page it came with."""
    if not header:
        return None
    for part in header.split(","):
        target, _, params = part.partition(";")
        rels = [p.strip() for p in params.split(";")]
        if 'rel="next"' in rels or "rel=next" in rels:
            return urljoin(current, target.strip().strip("<>"))
    return None
