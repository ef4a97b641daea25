"""The local gateway's access line: one per request, shaped like API Gateway's access log.

It names the route template (``/v1/suppressions/{recipient}``), never the path or query as sent:
those carry recipients, message ids and admin reasons.
"""

from __future__ import annotations

import logging
import re

from local.logs import ACCESS_LOGGER

# Outside the "sendledger" logger tree, whose Powertools handler would dress the line as the api Lambda's.
ACCESS_LOG = logging.getLogger(ACCESS_LOGGER)
UNROUTED = "-"  # what API Gateway logs as the resource path of a request no route matched
_METHOD = re.compile(r"[A-Z]{1,16}")  # any other token is the client's text, not a method name


def access_line(method: str, route: str, status: int, latency_ms: float, caller: str) -> str:
    shown = method if _METHOD.fullmatch(method) else "OTHER"
    return f"{shown} {route} {status} {latency_ms:.0f} ms {caller}"


def log_access(method: str, route: str, status: int, latency_ms: float, caller: str) -> None:
    # The console's own reads repeat every 2 s while it is open: kept out of the INFO stream.
    quiet = method in {"GET", "HEAD"} and (route == "/" or route.startswith("/local/")) and status < 400
    ACCESS_LOG.log(
        logging.DEBUG if quiet else logging.INFO, "%s", access_line(method, route, status, latency_ms, caller)
    )
