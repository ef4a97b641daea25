"""A Lambda context object for local invocations (what Powertools and the handlers read)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from local.constants import ACCOUNT_ID, REGION

DEFAULT_TIMEOUT_SECONDS = 29.0  # API Gateway's integration timeout


@dataclass
class LambdaContext:
    function_name: str
    region: str = REGION
    account_id: str = ACCOUNT_ID
    memory_limit_in_mb: int = 512
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    monotonic: Callable[[], float] = time.monotonic
    started_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.started_at = self.monotonic()

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{self.account_id}:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return f"local/[{self.function_version}]{self.aws_request_id[:8]}"

    def get_remaining_time_in_millis(self) -> int:
        elapsed = self.monotonic() - self.started_at
        return max(0, int((self.timeout_seconds - elapsed) * 1000))


def context_factory(
    function_name: str,
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    region: str = REGION,
    account_id: str = ACCOUNT_ID,
    monotonic: Callable[[], float] = time.monotonic,
) -> Callable[[], LambdaContext]:
    """A fresh context per invocation: new request id, the timeout counting down from now."""

    def make() -> LambdaContext:
        return LambdaContext(
            function_name=function_name,
            region=region,
            account_id=account_id,
            timeout_seconds=timeout_seconds,
            monotonic=monotonic,
        )

    return make
