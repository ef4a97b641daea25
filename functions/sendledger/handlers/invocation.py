"""The runtime of the api invocation in progress, for the routes of every router.

A context variable, not the router's shared context dict: a nested or concurrent invocation
(threads in tests, the local stack) must not clear it.
"""

from __future__ import annotations

from contextvars import ContextVar

from sendledger import bootstrap

RUNTIME: ContextVar[bootstrap.Runtime | None] = ContextVar("runtime", default=None)


def current_runtime() -> bootstrap.Runtime:
    """The invocation's own runtime, else the container's (built on first use)."""
    return RUNTIME.get() or bootstrap.runtime()
