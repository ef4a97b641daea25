"""Requests signed by botocore's own SigV4 signer, as an AWS SDK or awscurl signs them."""

from __future__ import annotations

from typing import Any

import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from local.constants import DEFAULT_LOCAL_CREDENTIALS, REGION, SIGV4_SERVICE
from local.sigv4 import LocalCredential, parse_credentials
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS

CREDENTIALS = {credential.name: credential for credential in parse_credentials(DEFAULT_LOCAL_CREDENTIALS)}
APP, APP2, ADMIN = CREDENTIALS["app"], CREDENTIALS["app2"], CREDENTIALS["admin"]
TASK_1, TASK_2 = CREDENTIALS["app-task-1"], CREDENTIALS["app-task-2"]  # two sessions of one role


def signed_headers(
    method: str,
    url: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    credential: LocalCredential = APP,
    region: str = REGION,
) -> dict[str, str]:
    """The headers to send: ``headers`` plus X-Amz-Date and Authorization, for ``url`` as given."""
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    SigV4Auth(Credentials(credential.access_key, credential.secret_key), SIGV4_SERVICE, region).add_auth(request)
    return dict(request.headers.items())


def signed_request(
    method: str,
    url: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    credential: LocalCredential = APP,
    **kwargs: Any,
) -> requests.Response:
    sent = signed_headers(method, url, body, headers, credential=credential, **kwargs)
    return requests.request(method, url, data=body, headers=sent, timeout=REQUEST_TIMEOUT_SECONDS)
