"""The botocore hooks through which the simulator sees SES and SNS calls.

Handlers registered on a session are copied into every client created from it afterwards, so
the production adapters need no change. ``before-send`` sees the real wire request and may answer
it without moto; ``after-call`` sees moto's parsed answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from io import BytesIO
from typing import Any

import boto3
from botocore.awsrequest import AWSPreparedRequest, AWSResponse

BEFORE_SEND_EMAIL = "before-send.sesv2.SendEmail"
AFTER_SEND_EMAIL = "after-call.sesv2.SendEmail"
BEFORE_PUBLISH = "before-send.sns.Publish"
AFTER_PUBLISH = "after-call.sns.Publish"
# Where answer_locally points a request: a host no moto URL pattern matches.
NOWHERE = "http://sendledger-simulator.invalid/answered-locally"


class Hooks:
    """One set of event handlers, attachable to several sessions and detachable from all."""

    def __init__(self, handlers: Mapping[str, Callable[..., Any]]) -> None:
        self.handlers = dict(handlers)
        self._sessions: list[Any] = []

    def attach(self, session: Any = None) -> None:
        if session is None:
            session = boto3._get_default_session()  # creates it when missing, like boto3.client
        for event, handler in self.handlers.items():
            session.events.register(event, handler)
        self._sessions.append(session)

    def detach(self) -> None:
        for session in self._sessions:
            for event, handler in self.handlers.items():
                session.events.unregister(event, handler)
        self._sessions.clear()


def body_bytes(request: AWSPreparedRequest) -> bytes:
    body: Any = request.body
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):  # a seekable stream: read it and rewind for the real send
        position = body.tell()
        data = body.read()
        body.seek(position)
        return data if isinstance(data, bytes) else str(data).encode("utf-8")
    return bytes(body)


def caller_identity(request: AWSPreparedRequest) -> str:
    """SES reports the IAM identity name; locally the access key id is all there is."""
    authorization = str(request.headers.get("Authorization", ""))
    match = re.search(r"Credential=([^/]+)/", authorization)
    return match.group(1) if match else "local-developer"


class _RawBody(BytesIO):
    """The raw object botocore's AWSResponse reads (urllib3-like ``stream``)."""

    def stream(self, **_kwargs: Any) -> Any:
        contents = self.read()
        while contents:
            yield contents
            contents = self.read()


def answer_locally(
    request: AWSPreparedRequest, status: int, headers: dict[str, str], body: dict[str, Any]
) -> AWSResponse:
    """A provider answer that never reaches moto.

    botocore calls *every* before-send handler; under ``mock_aws`` moto's own stubber runs
    after this one and would still execute the request. Pointing the request at a host no
    moto URL pattern matches makes the stubber pass, so the provider really saw nothing.
    """
    url = request.url
    request.url = NOWHERE
    payload = json.dumps(body).encode("utf-8")
    headers = {**headers, "Content-Length": str(len(payload))}
    return AWSResponse(url, status, headers, _RawBody(payload))
