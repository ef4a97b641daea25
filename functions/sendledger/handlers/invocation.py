"""The runtime of the api invocation in progress, for the routes of every router.

A context variable, not the router's shared context dict: a nested or concurrent invocation
(threads in tests, the local stack) must not clear it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from sendledger import bootstrap
from sendledger.domain import errors

RUNTIME: ContextVar[bootstrap.Runtime | None] = ContextVar("runtime", default=None)


def current_runtime() -> bootstrap.Runtime:
    """The invocation's own runtime, else the container's (built on first use)."""
    return RUNTIME.get() or bootstrap.runtime()


def identity_arn(event: Mapping[str, Any]) -> str:
    """`requestContext.identity.userArn` as API Gateway's IAM authorization sets it (a role
    session's own ARN): the actor of an audited act. Locally, unsigned: the local principal."""
    context = event.get("requestContext")
    identity = context.get("identity") if isinstance(context, Mapping) else None
    arn = identity.get("userArn") if isinstance(identity, Mapping) else None
    arn = arn if isinstance(arn, str) and arn else current_runtime().settings.local_principal
    if not arn:
        raise errors.UnknownCaller("no caller identity on the request (IAM authorization expected)")
    return arn
