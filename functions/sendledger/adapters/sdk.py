"""How every AWS client here is made and configured, so each adapter states only its retries and timeouts.

Clients come from one botocore session, not from boto3: boto3 adds resources and S3 transfers
that nothing here uses, and importing it costs about as much again as botocore (measured in
the cold-start bench, benchmarks/cold_start.py). botocore reads the same credentials, region
and `AWS_ENDPOINT_URL` from the environment. Two choices hold for all of them:
- no client-side parameter validation: the requests are built in code, and the service
  validates them anyway;
- a User-Agent fixed once per container. Otherwise botocore builds the header twice per
  request from some forty components, each sanitised character by character: measured at
  about a fifth of the poller's own CPU per AWS call. The fixed header still names
  sendledger, botocore, Python, the OS and the Lambda runtime.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import botocore
import botocore.session
from botocore.config import Config

# Safe to repeat (conditional writes, idempotent reads, receivers that dedupe): standard retries.
STANDARD_RETRIES: dict[str, Any] = {"max_attempts": 3, "mode": "standard"}
# One attempt only: max_attempts would still allow a retry.
NO_RETRIES: dict[str, Any] = {"total_max_attempts": 1, "mode": "standard"}


def user_agent() -> str:
    parts = [
        "sendledger",
        f"Botocore/{botocore.__version__}",
        f"lang/python#{platform.python_version()}",
        f"os/{platform.system().lower()}",
    ]
    runtime = os.environ.get("AWS_EXECUTION_ENV")
    if runtime:
        parts.append(f"exec-env/{runtime}")
    return " ".join(parts)


USER_AGENT = user_agent()


MAX_POOL_CONNECTIONS = 10  # botocore's own default


def config(
    *,
    retries: dict[str, Any],
    read_timeout: float = 5,
    connect_timeout: float = 2,
    max_pool_connections: int = MAX_POOL_CONNECTIONS,
) -> Config:
    return Config(
        retries=retries,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=max_pool_connections,
        parameter_validation=False,
        user_agent=USER_AGENT,
    )


def session() -> botocore.session.Session:
    """The session clients are made from. In a process that had loaded boto3 before its first
    client (the local stack, the tests, the bench), boto3's default session: observers hook it,
    and moto renews it per mock, as they expect of any client. Otherwise (a Lambda) one botocore
    session of our own for every client (its credential chain and service models loaded once),
    even once a library has imported boto3 after it: Powertools' feature flags do, on a send."""
    if _follows_boto3():
        shared: botocore.session.Session = sys.modules["boto3"]._get_default_session()._session
        return shared
    return _own_session()


@cache
def _follows_boto3() -> bool:
    """Decided once, at the first client: a second session would load everything again."""
    return "boto3" in sys.modules


@cache
def _own_session() -> botocore.session.Session:
    return botocore.session.get_session()


def client(service: str, client_config: Config) -> Any:
    return session().create_client(service, config=client_config)


class LazyClient:
    """A client made by its first caller, then shared: a Lambda whose invocation never calls the
    service does not pay for the client at cold start. Made once: the poller's first events are
    applied on several threads at once, and each would otherwise make its own."""

    def __init__(self, make: Callable[[], Any], made: Any = None) -> None:
        self._make = make
        self._client = made
        self._making = threading.Lock()

    def get(self) -> Any:
        if self._client is None:
            with self._making:
                if self._client is None:
                    self._client = self._make()
        return self._client
