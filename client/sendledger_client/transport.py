"""HTTP for the client: one request in, one response out; SigV4-signed unless the endpoint is local.

botocore already carries what a signed request needs (credential chain, SigV4, an HTTP session),
so no other HTTP library is used. A local endpoint is signed too when asked (``sign=True``): the
local stack verifies SigV4 against its own credentials, which botocore's chain then supplies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.exceptions import BotoCoreError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from botocore.httpsession import URLLib3Session
from botocore.session import Session

from sendledger_client.errors import NoAnswer, NotConfigured

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SERVICE = "execute-api"
LOCAL_REGION = "us-east-1"  # the local stack's region unless AWS_DEFAULT_REGION says otherwise


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def text(self) -> str:
        return self.body.decode("utf-8")


class Transport(Protocol):
    def send(self, request: Request) -> Response: ...


def checked_endpoint(url: str) -> str:
    """The endpoint as given, once it is an http(s) URL with a host; ValueError naming it otherwise."""
    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname and (parts.port or 0) >= 0:
            return url
    except ValueError:  # `.port` of a port that is not a number in 0-65535
        pass
    # `127.0.0.1:8080`, `localhost:8080`: a host and port without the scheme.
    hint = f" (did you mean http://{url}?)" if re.fullmatch(r"[\w.-]+:\d+(/\S*)?", url) else ""
    raise ValueError(f"{url!r} is not an http(s) URL with a host{hint}")


def is_local(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOCAL_HOSTS


def region_of(url: str) -> str | None:
    """`<id>.execute-api.<region>.amazonaws.com` names its region."""
    parts = (urlsplit(url).hostname or "").split(".")
    if len(parts) >= 4 and parts[1] == SERVICE:
        return parts[2]
    return None


class Signer:
    """SigV4 for API Gateway with IAM authorization, credentials from botocore's chain."""

    def __init__(self, region: str, profile: str | None = None, session: Session | None = None) -> None:
        self.session = session or Session(profile=profile)
        self.region = region

    def sign(self, request: AWSRequest) -> None:
        try:
            credentials = self.session.get_credentials()
            frozen = credentials.get_frozen_credentials() if credentials is not None else None
        except BotoCoreError as error:  # a profile that does not exist, an expired SSO session...
            raise NotConfigured(f"the AWS credentials could not be read: {error}") from None
        if frozen is None:
            raise NotConfigured(
                "no AWS credentials to sign with: set AWS_PROFILE (or pass --profile), or "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
        SigV4Auth(frozen, SERVICE, self.region).add_auth(request)


class HttpTransport:
    def __init__(self, signer: Signer | None = None, timeout: float = 35.0) -> None:
        self.signer = signer
        self.http = URLLib3Session(timeout=timeout)

    def send(self, request: Request) -> Response:
        raw = AWSRequest(method=request.method, url=request.url, data=request.body, headers=dict(request.headers))
        if self.signer is not None:
            self.signer.sign(raw)
        try:
            answer = self.http.send(raw.prepare())
        except (HTTPClientError, BotocoreConnectionError) as error:  # refused, unresolvable, reset, timed out
            raise NoAnswer(request.url.partition("?")[0], _reason(error)) from None
        return Response(
            status=answer.status_code,
            headers={name.lower(): value for name, value in answer.headers.items()},
            body=answer.content,
        )


def transport_for(
    endpoint: str, region: str | None = None, profile: str | None = None, *, sign: bool | None = None
) -> Transport:
    """Signed unless the endpoint is local (the local stack's fixed principal); ``sign`` overrides.

    A remote endpoint needs a region (from ``region``, the endpoint's host name or the AWS
    config); a local one signed without one uses the local stack's.
    """
    local = is_local(checked_endpoint(endpoint))
    if not ((not local) if sign is None else sign):
        return HttpTransport()
    try:
        session = Session(profile=profile)
        chosen = region or region_of(endpoint) or session.get_config_variable("region")
    except BotoCoreError as error:  # e.g. --profile names no profile
        raise NotConfigured(f"the AWS configuration could not be read: {error}") from None
    if not chosen and not local:
        raise NotConfigured(f"no region to sign requests to {endpoint} with: pass --region or set AWS_REGION")
    return HttpTransport(Signer(chosen or LOCAL_REGION, session=session))


def _reason(error: BotoCoreError) -> str:
    """The innermost cause's words: "Connection refused", "Name or service not known", "timed out"."""
    cause: BaseException | None = getattr(error, "kwargs", {}).get("error") or error
    while cause is not None and not isinstance(cause, OSError) and (cause.__cause__ or cause.__context__):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return str(cause or error).rpartition(": ")[2] or type(error).__name__
