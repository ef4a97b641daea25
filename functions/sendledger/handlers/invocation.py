"""The runtime of the api invocation in progress, for the routes of every router.

A context variable, not the router's shared context dict: a nested or concurrent invocation
(threads in tests, the local stack) must not clear it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from sendledger import bootstrap
from sendledger.domain import callers, errors

RUNTIME: ContextVar[bootstrap.Runtime | None] = ContextVar("runtime", default=None)


def current_runtime() -> bootstrap.Runtime:
    """The invocation's own runtime, else the container's (built on first use)."""
    return RUNTIME.get() or bootstrap.runtime()


def caller_of(event: Mapping[str, Any]) -> callers.Caller:
    """The application the request's identity signs for: every session of a role is the role."""
    arn = identity_arn(event)
    return callers.caller_of(arn, current_runtime().settings.caller_tenants)


def identity_arn(event: Mapping[str, Any]) -> str:
    """The signer's ARN as API Gateway's IAM authorization hands it over (a role session's own):
    the actor of an audited act. Payload format 1.0 (the HTTP API's integration, as REST's proxy)
    puts it in `requestContext.identity.userArn`; format 2.0 in `requestContext.authorizer.iam`,
    read too so that a change of format cannot silently make every caller unknown.
    Locally, unsigned: the local principal."""
    context = event.get("requestContext")
    context = context if isinstance(context, Mapping) else {}
    arn = _user_arn(context.get("identity")) or _user_arn(_iam_of(context.get("authorizer")))
    arn = arn or current_runtime().settings.local_principal
    if not arn:
        raise errors.UnknownCaller("no caller identity on the request (IAM authorization expected)")
    return arn


def _iam_of(authorizer: Any) -> Any:
    return authorizer.get("iam") if isinstance(authorizer, Mapping) else None


def _user_arn(identity: Any) -> str | None:
    arn = identity.get("userArn") if isinstance(identity, Mapping) else None
    return arn if isinstance(arn, str) and arn else None
