"""What the Mailgun adapters share: one urllib3 pool, Basic auth `api:<key>`, the key itself.

urllib3 ships with botocore, so no dependency is added. The pool never retries: a resent
`POST /messages` after a read timeout is exactly the duplicate the project prevents.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import cache

import urllib3

from sendledger.adapters.secrets import provider_secret
from sendledger.domain.errors import DependencyUnavailable

CONNECT_TIMEOUT_SECONDS = 2.0
READ_TIMEOUT_SECONDS = 5.0

KeySource = Callable[[], str]


@cache
def pool() -> urllib3.PoolManager:
    return urllib3.PoolManager(
        retries=False,
        timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_SECONDS, read=READ_TIMEOUT_SECONDS),
        maxsize=16,
    )


def basic_auth(api_key: str) -> str:
    return "Basic " + base64.b64encode(f"api:{api_key}".encode()).decode()


def secret_value(secret_id: str) -> KeySource:
    """The secret's current value (Powertools Parameters, cached; never logged); a fault is a 503."""

    def read() -> str:
        try:
            return provider_secret(secret_id)
        except Exception as exc:  # GetParameterError wraps every Secrets Manager fault
            raise DependencyUnavailable(f"secret unavailable: {type(exc).__name__}", retry_after_seconds=5) from None

    return read
