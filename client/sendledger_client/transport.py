"""HTTP for the client: one request in, one response out; SigV4-signed unless the endpoint is local.

botocore already carries what a signed request needs (credential chain, SigV4, an HTTP session),
so no other HTTP library is used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.httpsession import URLLib3Session
from botocore.session import Session

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SERVICE = "execute-api"


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
        credentials = self.session.get_credentials()
        if credentials is None:
            raise RuntimeError("no AWS credentials found (environment, profile, SSO or instance role)")
        SigV4Auth(credentials.get_frozen_credentials(), SERVICE, self.region).add_auth(request)


class HttpTransport:
    def __init__(self, signer: Signer | None = None, timeout: float = 35.0) -> None:
        self.signer = signer
        self.http = URLLib3Session(timeout=timeout)

    def send(self, request: Request) -> Response:
        raw = AWSRequest(method=request.method, url=request.url, data=request.body, headers=dict(request.headers))
        if self.signer is not None:
            self.signer.sign(raw)
        answer = self.http.send(raw.prepare())
        return Response(
            status=answer.status_code,
            headers={name.lower(): value for name, value in answer.headers.items()},
            body=answer.content,
        )


def transport_for(endpoint: str, region: str | None = None, profile: str | None = None) -> Transport:
    """Unsigned for a local endpoint (the local stack's fixed principal); signed otherwise."""
    if is_local(endpoint):
        return HttpTransport()
    session = Session(profile=profile)
    chosen = region or region_of(endpoint) or session.get_config_variable("region")
    if not chosen:
        raise RuntimeError("no region: pass --region or set AWS_REGION")
    return HttpTransport(Signer(chosen, session=session))
