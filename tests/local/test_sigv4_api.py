"""SigV4 callers through the local gateway into the real api Lambda (moto): keys and messages per caller."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.constants import LOCAL_PRINCIPAL
from local.gateway import Gateway
from sendledger import names
from sendledger.handlers import api as api_handler
from tests.conftest import moto_ledger
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import APP, APP2, signed_request


@pytest.fixture
def aws() -> Iterator[None]:
    """The suite's moto ledger (tests/local's own `aws` fixture has none)."""
    with moto_ledger():
        yield


@pytest.fixture
def gateway(api: Any, healthy_watermarks: None) -> Iterator[Gateway]:
    # `api` points the handler's composition root at moto; the gateway calls the handler as deployed.
    gw = Gateway(api_handler.lambda_handler, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0)
    gw.start()
    yield gw
    gw.stop()


def send(gateway: Gateway, summary: str, credential: Any) -> requests.Response:
    body = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": summary},
    }
    headers = {"Content-Type": "application/json", "Idempotency-Key": "order-42-alert"}
    return signed_request(
        "POST", f"{gateway.url}/v1/messages", json.dumps(body).encode(), headers, credential=credential
    )


def test_two_callers_reusing_one_key_get_separate_messages_each_only_their_own(gateway: Gateway) -> None:
    first, second = send(gateway, "disk full", APP), send(gateway, "cpu hot", APP2)
    assert (first.status_code, second.status_code) == (202, 202), (first.text, second.text)
    assert "Idempotent-Replayed" not in first.headers and "Idempotent-Replayed" not in second.headers
    mine, theirs = first.json()["message_id"], second.json()["message_id"]
    assert mine != theirs
    # The same key and other payload from the same caller is still the draft's 422.
    assert send(gateway, "cpu hot", APP).status_code == 422
    for owner, other, message_id in ((APP, APP2, mine), (APP2, APP, theirs)):
        url = f"{gateway.url}/v1/messages/{message_id}"
        own = signed_request("GET", url, credential=owner)
        assert own.status_code == 200
        assert own.json()["message_id"] == message_id
        assert signed_request("GET", url, credential=other).status_code == 404
        assert requests.get(url, timeout=REQUEST_TIMEOUT_SECONDS).status_code == 404  # the unsigned principal
