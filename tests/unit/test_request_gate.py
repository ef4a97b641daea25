"""The API Gateway functions' one entry (handlers/request_gate.serve): each counts its requests
in EMF and logs under the request's id, the gate's refusals included (they need no runtime)."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from sendledger.handlers import api, webhooks
from tests.support.fakes import FakeLambdaContext, api_event


def emf_documents(stdout: str) -> list[dict[str, Any]]:
    return [document for line in stdout.splitlines() if "_aws" in (document := json.loads(line))]


@pytest.mark.parametrize(
    ("handler", "counted_as", "status"),
    [(api, "ApiRequests", 405), (webhooks, "WebhookRequests", 404)],
    ids=["api", "webhooks"],
)
def test_a_request_is_counted_and_logged_under_its_id_even_when_the_gate_refuses_it(
    handler: ModuleType, counted_as: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    event = api_event("DELETE", "/healthz")  # the api has the route, not that method; the webhooks not even it
    capsys.readouterr()
    answer = handler.lambda_handler(event, FakeLambdaContext())
    assert answer["statusCode"] == status
    assert handler.logger.get_correlation_id() == event["requestContext"]["requestId"]
    counts = [document[counted_as] for document in emf_documents(capsys.readouterr().out) if counted_as in document]
    assert counts == [[1.0]]  # one EMF document, the metric counted once
