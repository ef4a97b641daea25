"""The console's ledger reads (LedgerInspector) against the real api Lambda and moto."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.constants import LOCAL_PRINCIPAL
from local.gateway import Gateway
from local.inspection import LedgerInspector
from sendledger import names
from sendledger.handlers import api as api_handler
from tests.conftest import TABLE
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import ADMIN, APP2, signed_request
from tests.local.test_sigv4_api import aws, send

__all__ = ["aws"]  # the suite's moto ledger


@pytest.fixture
def gateway(api: Any, healthy_watermarks: None) -> Iterator[Gateway]:
    inspector = LedgerInspector(TABLE, runtime=lambda: api.services)
    gw = Gateway(
        api_handler.lambda_handler, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0, inspector=inspector
    )
    gw.start()
    yield gw
    gw.stop()


def test_messages_of_any_caller_as_the_api_shows_them_to_their_own(gateway: Gateway) -> None:
    sent = send(gateway, "disk full", APP2)
    message_id = sent.json()["message_id"]
    own = signed_request("GET", f"{gateway.url}/v1/messages/{message_id}", credential=APP2).json()
    local = requests.get(f"{gateway.url}/local/messages/{message_id}", timeout=REQUEST_TIMEOUT_SECONDS)
    assert local.json() == own  # the same view, history included, for a message the local principal cannot read
    listed = requests.get(f"{gateway.url}/local/messages?ids={message_id},msg_nothing", timeout=REQUEST_TIMEOUT_SECONDS)
    assert listed.json() == [{k: v for k, v in own.items() if k != "history"}]


def test_every_known_recipient_with_its_suppression_view(gateway: Gateway) -> None:
    send(gateway, "disk full", APP2)
    url = f"{gateway.url}/v1/admin/suppressions/Carol%40Example.com"
    body = json.dumps({"reason": "asked to stop"}).encode()
    assert signed_request("PUT", url, body, {"Content-Type": "application/json"}, credential=ADMIN).ok
    views = requests.get(f"{gateway.url}/local/suppressions", timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert [(v["recipient"], v["suppressed"], v["version"]) for v in views] == [
        ("carol@example.com", True, 1),
        ("success@simulator.amazonses.com", False, 0),
    ]
    api_view = requests.get(  # the admin's view (the unsigned local principal is an admin locally)
        f"{gateway.url}/v1/admin/suppressions/carol%40example.com", timeout=REQUEST_TIMEOUT_SECONDS
    )
    assert views[0] == api_view.json()
