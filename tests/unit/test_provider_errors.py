"""What an SDK failure proves about acceptance (adapters/aws.classify_error)."""

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from sendledger.adapters.aws import PROVIDER_CONFIG, classify_error
from sendledger.domain.provider import CallResult


def client_error(code, status, headers=None):
    return ClientError(
        {
            "Error": {"Code": code, "Message": "m"},
            "ResponseMetadata": {"HTTPStatusCode": status, "RequestId": "r-1", "HTTPHeaders": headers or {}},
        },
        "SendEmail",
    )


@pytest.mark.parametrize(
    ("exc", "result"),
    [
        (ReadTimeoutError(endpoint_url="https://email"), CallResult.AMBIGUOUS),
        (ConnectTimeoutError(endpoint_url="https://email"), CallResult.UNAVAILABLE),
        (EndpointConnectionError(endpoint_url="https://email"), CallResult.UNAVAILABLE),
        (client_error("TooManyRequestsException", 429), CallResult.THROTTLED),
        (client_error("Throttling", 400), CallResult.THROTTLED),
        (client_error("SendingPausedException", 400), CallResult.UNAVAILABLE),
        (client_error("InternalFailure", 500), CallResult.AMBIGUOUS),
        (client_error("MessageRejected", 400), CallResult.REJECTED),
        (client_error("InvalidParameter", 400), CallResult.REJECTED),
    ],
)
def test_classification(exc, result):
    assert classify_error(exc).result is result


def test_retry_after_header_is_honoured():
    response = classify_error(client_error("TooManyRequestsException", 429, {"retry-after": "3"}))
    assert response.retry_after_seconds == 3.0 and response.request_id == "r-1"


def test_sdk_never_retries_a_send():
    # botocore's `max_attempts` counts retries; only total_max_attempts=1 means "one call".
    assert PROVIDER_CONFIG.retries == {"total_max_attempts": 1, "mode": "standard"}
