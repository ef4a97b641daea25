"""Powertools observability shared by the three handlers.

Logger (JSON, correlation id) and Metrics (EMF) are always on. The Powertools Tracer (X-Ray
SDK) costs about 110 ms of cold start on its own — more than the cold-start bar (a handler's
import at most 1.5 times `import boto3`) leaves room for — so it is opt-in per stage: with
SENDLEDGER_XRAY_SDK=true each handler is wrapped by `Tracer.capture_lambda_handler` and AWS
calls become subsegments. Lambda active tracing (set by the CDK stack) records every
invocation either way. Each handler says whether its answer may be copied into the trace
(Tracer's `capture_response`): the api's may not, it holds addresses and histories.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from sendledger import names

F = TypeVar("F", bound=Callable[..., Any])


def traced(*, capture_response: bool) -> Callable[[F], F]:
    def wrap(handler: F) -> F:
        if os.environ.get(names.ENV_XRAY_SDK, "").lower() != "true":
            return handler
        from aws_lambda_powertools import Tracer

        return cast(F, Tracer().capture_lambda_handler(handler, capture_response=capture_response))

    return wrap
