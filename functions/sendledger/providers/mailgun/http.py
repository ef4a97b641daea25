"""What the Mailgun adapters share: Basic auth `api:<key>` and the key itself.

The send goes through the HTTP providers' one client (providers/http.py: urllib3, never
retried: a resent `POST /messages` after a read timeout is exactly the duplicate the project
prevents); the Events API reader keeps its own retrying pool (a read is safe to retry).
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from sendledger.adapters.secrets import provider_secret
from sendledger.domain.errors import DependencyUnavailable

KeySource = Callable[[], str]


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
