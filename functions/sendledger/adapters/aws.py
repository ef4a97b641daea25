"""boto3 clients, built once per warm container, with SDK retries off for provider calls.

A provider send must never be retried by the SDK: a retried SendEmail after a read timeout is
exactly the duplicate this project exists to prevent. Retries happen in the domain's backoff,
only on answers that prove the message was not accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from sendledger.adapters import sdk
from sendledger.domain.provider import CallResult, ProviderResponse

PROVIDER_CONFIG = sdk.config(retries=sdk.NO_RETRIES)

THROTTLING_CODES = frozenset(
    {"Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException", "LimitExceededException"}
)
UNAVAILABLE_CODES = frozenset(
    {"SendingPausedException", "AccountSuspendedException", "KMSThrottlingException", "KMSDisabledException"}
)


@cache
def client(service: str) -> Any:
    return sdk.client(service, PROVIDER_CONFIG)


def provider_call(call: Callable[[], dict[str, Any]]) -> ProviderResponse:
    """Run one provider API call; a returned MessageId is acceptance, anything else is classified."""
    try:
        response = call()
    except (ClientError, BotoCoreError) as exc:
        return classify_error(exc)
    return ProviderResponse(
        CallResult.ACCEPTED,
        provider_message_id=response["MessageId"],
        request_id=response.get("ResponseMetadata", {}).get("RequestId"),
    )


def classify_error(exc: Exception) -> ProviderResponse:
    """Map an SDK failure to what it proves about acceptance."""
    if isinstance(exc, ConnectTimeoutError | EndpointConnectionError):
        # The request never reached the provider.
        return ProviderResponse(CallResult.UNAVAILABLE, error_code=type(exc).__name__)
    if isinstance(exc, ReadTimeoutError | ConnectionClosedError):
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        meta = exc.response.get("ResponseMetadata", {})
        code = str(error.get("Code", "Unknown"))
        status = int(meta.get("HTTPStatusCode", 0) or 0)
        request_id = meta.get("RequestId")
        retry_after = _retry_after(meta.get("HTTPHeaders", {}))
        if code in THROTTLING_CODES or status == 429:
            return ProviderResponse(
                CallResult.THROTTLED, request_id=request_id, error_code=code, retry_after_seconds=retry_after
            )
        if code in UNAVAILABLE_CODES:
            return ProviderResponse(
                CallResult.UNAVAILABLE, request_id=request_id, error_code=code, retry_after_seconds=retry_after
            )
        if status >= 500:
            # A 5xx may come after the provider committed the message: evidence, not permission.
            return ProviderResponse(CallResult.AMBIGUOUS, request_id=request_id, error_code=code)
        return ProviderResponse(CallResult.REJECTED, request_id=request_id, error_code=code)
    return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)


def _retry_after(headers: dict[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
