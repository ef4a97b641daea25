"""The routes only the local stack has, answered by the gateway itself, never by the api Lambda.

``GET /local/outbox``, ``POST /local/poll``, ``GET /local/events``, the console
(``GET /local/console``, ``GET /`` redirects there) and what the console reads beside the API
(``GET /local/messages``, ``GET /local/suppressions``, ``GET /local/callers``). In the default ``open`` mode none of
them asks for a signature; in ``sigv4`` mode the gateway lets only the admin credential in
(local/auth.py): the outbox shows reset links.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, unquote

from local.apigateway import ApiGateway, Response, json_response, problem
from local.console_files import HEADERS as CONSOLE_HEADERS
from local.console_files import INDEX, console_file

LOG = logging.getLogger("sendledger.local.gateway")

OUTBOX_PATH = "/local/outbox"
POLL_PATH = "/local/poll"
CONSOLE_PATH = "/local/console"
MESSAGES_PATH = "/local/messages"
SUPPRESSIONS_PATH = "/local/suppressions"
EVENTS_PATH = "/local/events"  # what reached the local EventBridge bus, oldest first
CALLERS_PATH = "/local/callers"  # the local callers' admin views (rules, today's SMS count, history)
_READ = frozenset({"GET", "HEAD"})
LOCAL_ROUTES = {
    OUTBOX_PATH: _READ,
    POLL_PATH: frozenset({"POST"}),
    "/": _READ,
    CONSOLE_PATH: _READ,
    MESSAGES_PATH: _READ,
    SUPPRESSIONS_PATH: _READ,
    EVENTS_PATH: _READ,
    CALLERS_PATH: _READ,
}
# Local routes with a parameter: (prefix, route template); the rest of the path is one segment.
LOCAL_TEMPLATES = (
    (CONSOLE_PATH + "/", CONSOLE_PATH + "/{file}"),
    (MESSAGES_PATH + "/", MESSAGES_PATH + "/{message_id}"),
)


class Inspector(Protocol):
    """What the console reads beside the API (``local.inspection.LedgerInspector``)."""

    def message(self, message_id: str, *, with_history: bool = True) -> dict[str, Any] | None: ...

    def messages(self, message_ids: list[str]) -> list[dict[str, Any]]: ...

    def recipients(self) -> list[str]: ...


def local_route(path: str) -> tuple[str, frozenset[str]] | None:
    """The local route template ``path`` matches and its methods; None: not a local route."""
    allowed = LOCAL_ROUTES.get(path)
    if allowed is not None:
        return path, allowed
    for prefix, template in LOCAL_TEMPLATES:
        rest = path.removeprefix(prefix)
        if rest != path and rest and "/" not in rest:
            return template, _READ
    return None


class LocalRoutes:
    def __init__(
        self,
        api: ApiGateway,
        *,
        outbox: Callable[[], list[dict[str, Any]]],
        poll: Callable[[], dict[str, Any]] | None,
        events: Callable[[], list[dict[str, Any]]],
        inspector: Inspector | None,
        callers: Callable[[], list[str]] = list,
    ) -> None:
        self.api = api
        self.callers = callers
        self.outbox = outbox
        self.poll = poll
        self.events = events
        self.inspector = inspector

    def serve(self, path: str, query: str) -> Response:
        if path == OUTBOX_PATH:
            return json_response(200, self.outbox())
        if path == EVENTS_PATH:
            return json_response(200, self.events())
        if path == POLL_PATH:
            return self._poll()
        if path == CALLERS_PATH:
            return self._callers()
        if path == "/":
            return 302, [("Location", CONSOLE_PATH), ("Content-Type", "text/plain")], b""
        if path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/"):
            return self._console_file(INDEX if path == CONSOLE_PATH else path.rpartition("/")[2])
        if self.inspector is None:
            return problem(404, "the ledger inspector is not configured")
        try:
            if path == SUPPRESSIONS_PATH:
                return self._suppressions(self.inspector)
            if path == MESSAGES_PATH:
                ids = [i for v in parse_qs(query).get("ids", []) for i in v.split(",") if i]
                return json_response(200, self.inspector.messages(ids))
            view = self.inspector.message(unquote(path.rpartition("/")[2]))
        except Exception as error:
            LOG.exception("reading the ledger for %s failed", path.rpartition("/")[0] or path)
            return problem(503, f"the ledger could not be read ({type(error).__name__})", [("Retry-After", "1")])
        return json_response(200, view) if view is not None else problem(404, "no such message")

    def _poll(self) -> Response:
        if self.poll is None:
            return problem(404, "polling is not configured")
        try:
            return json_response(200, self.poll())
        except Exception as error:
            # A poll cycle that fails is a dependency fault, as deployed: the next cycle retries it.
            LOG.exception("local poll failed")
            detail = f"poll cycle failed ({type(error).__name__}); it is retried"
            return problem(503, detail, [("Retry-After", "1")])

    @staticmethod
    def _console_file(name: str) -> Response:
        found = console_file(name)
        if found is None:
            return problem(404, "no such console file")
        content, content_type = found
        return 200, [("Content-Type", content_type), *CONSOLE_HEADERS], content

    def _callers(self) -> Response:
        """Every local caller's view as the admin's ``GET /v1/admin/callers/{id}`` answers it."""
        return self._admin_views("/v1/admin/callers/", self.callers())

    def _suppressions(self, inspector: Inspector) -> Response:
        """Every known recipient's suppression view, exactly as the admin's
        ``GET /v1/admin/suppressions/{r}`` answers it (the console is the operator's)."""
        return self._admin_views("/v1/admin/suppressions/", inspector.recipients())

    def _admin_views(self, route: str, names: list[str]) -> Response:
        views: list[Any] = []
        for name in names:
            status, _, payload = self.api.get_unsigned(route + quote(name, safe=""))
            if status == 503:
                return problem(503, "the ledger could not be read", [("Retry-After", "1")])
            if status == 200:
                views.append(json.loads(payload))
        return json_response(200, views)
