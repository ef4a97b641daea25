"""Powertools observability shared by the handlers.

Logger (JSON, correlation id) and Metrics (EMF) are always on. Every function's log lines leave
out what each line would repeat (`lean_logger`): the function's name, ARN and memory are the log
group's, the service is the project's one, the source location is in the code. The request id,
correlation id, cold start, level, time and the line's own facts stay: they are the evidence.

The Powertools Tracer (X-Ray SDK) costs about 110 ms of cold start on its own — more than the
cold-start bar (a handler's import at most 1.5 times `import boto3`) leaves room for — so it is opt-in per stage: with
SENDLEDGER_XRAY_SDK=true each handler is wrapped by `Tracer.capture_lambda_handler` and AWS
calls become subsegments. Lambda active tracing (set by the CDK stack) records every
invocation either way. Each handler says whether its answer may be copied into the trace
(Tracer's `capture_response`): the api's may not, it holds addresses and histories.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sendledger import names

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger

F = TypeVar("F", bound=Callable[..., Any])

# A GET, a duplicate event or an idle cycle records no application metric, and that is expected.
# Powertools would say so in a UserWarning: a plain-text line on stderr, once per container, among
# the log group's JSON lines.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)

# Keys Powertools puts on every line that say nothing a line's log group does not (issue 36:
# about 1 KB of logs per send).
REPEATED_LOG_KEYS = frozenset({"function_name", "function_arn", "function_memory_size", "service", "location"})


def lean_logger(**options: Any) -> Logger:
    """The handlers' Logger: Powertools' JSON lines without REPEATED_LOG_KEYS (`options`: Logger's own)."""
    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

    class LeanFormatter(LambdaPowertoolsFormatter):
        def append_keys(self, **additional_keys: Any) -> None:
            super().append_keys(**{k: v for k, v in additional_keys.items() if k not in REPEATED_LOG_KEYS})

    return Logger(logger_formatter=LeanFormatter(location=None), **options)  # a None key is left out of every line


def traced(*, capture_response: bool) -> Callable[[F], F]:
    def wrap(handler: F) -> F:
        if os.environ.get(names.ENV_XRAY_SDK, "").lower() != "true":
            return handler
        from aws_lambda_powertools import Tracer

        return cast(F, Tracer().capture_lambda_handler(handler, capture_response=capture_response))

    return wrap
