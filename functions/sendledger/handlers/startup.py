"""A Lambda container's start: no cyclic garbage collection until its first invocation returns.

Importing a handler, building its composition root and serving the first event allocate tens
of thousands of objects that live as long as the container (modules, classes, botocore's
service models, pydantic's validators). The collector's passes over them during the start free
next to nothing and cost a tenth to a sixth of a cold start's CPU (benchmarks/README.md, cold
start). So a Lambda container collects nothing until its first invocation has returned,
then freezes what it holds (`gc.freeze`: later passes skip those objects, warm invocations'
passes included) and collects as usual from then on. The first invocation is bounded by the
function's timeout. Outside Lambda (tests, the local stack, CDK) collection never stops.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_LAMBDA = "AWS_LAMBDA_FUNCTION_NAME"  # set by the Lambda runtime in every container


class _Start:
    holds_collector = False  # set by hold(), cleared by release()


def hold() -> None:
    """At the handler package's import, before anything heavy: a Lambda container stops collecting."""
    if os.environ.get(_LAMBDA) and gc.isenabled() and not _Start.holds_collector:
        gc.disable()
        _Start.holds_collector = True


def release() -> None:
    """The start is over: what the container holds is frozen, and collection resumes."""
    if _Start.holds_collector:
        _Start.holds_collector = False
        gc.freeze()
        gc.enable()


def ends_startup(handler: F) -> F:
    """Wraps a Lambda handler: its first invocation's return (or raise) ends the start."""

    @wraps(handler)
    def invoke(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        finally:
            if _Start.holds_collector:
                release()

    return cast(F, invoke)
