"""The one HTTP client of the providers that have no SDK: urllib3 (it ships with botocore in the
Lambda runtime), never retried by the client, with the same timeouts as the SDK clients.

A send must never be retried by a transport layer: a retried POST after a read timeout is the
duplicate this project exists to prevent. Retries happen in the domain's backoff, only on
answers that prove the message was not accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

import urllib3

from sendledger.domain.values import value

CONNECT_TIMEOUT_SECONDS = 2.0
READ_TIMEOUT_SECONDS = 5.0


@value
class HttpAnswer:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes


class Http(Protocol):
    """One request, one answer; raises urllib3's exceptions for what never got an answer."""

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer: ...


class Urllib3Http:
    def __init__(self, pool: Any = None) -> None:
        self.pool = pool or urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_SECONDS, read=READ_TIMEOUT_SECONDS),
            retries=False,
        )

    def request(self, method: str, url: str, *, body: bytes | None, headers: Mapping[str, str]) -> HttpAnswer:
        response = self.pool.request(method, url, body=body, headers=dict(headers), retries=False, redirect=False)
        return HttpAnswer(
            status=response.status,
            headers={name.lower(): value for name, value in response.headers.items()},
            body=response.data or b"",
        )


@cache
def default_http() -> Http:
    return Urllib3Http()
