"""What the Mailgun adapters share: one urllib3 pool, Basic auth `api:<key>`, the key itself.

urllib3 ships with botocore, so no dependency is added. The pool never retries: a resent
`POST /messages` after a read timeout is exactly the duplicate the project prevents.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import cache

import urllib3

from sendledger.domain.errors import DependencyUnavailable

CONNECT_TIMEOUT_SECONDS = 2.0
READ_TIMEOUT_SECONDS = 5.0
SECRET_MAX_AGE_SECONDS = 300  # Powertools' cache: a rotated key is picked up within this

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
    """The secret's current value through Powertools Parameters (cached; never logged)."""

    def read() -> str:
        from aws_lambda_powertools.utilities import parameters

        try:
            value = parameters.get_secret(secret_id, max_age=SECRET_MAX_AGE_SECONDS)
        except Exception as exc:  # GetParameterError wraps every Secrets Manager fault
            raise DependencyUnavailable(f"secret unavailable: {type(exc).__name__}", retry_after_seconds=5) from None
        text = value.decode() if isinstance(value, bytes) else str(value)
        if not text:
            raise ValueError(f"secret {secret_id} is empty")
        return text

    return read
