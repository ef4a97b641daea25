"""Mailgun's signed webhooks through the real api handler over moto: verify, refuse, apply once."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from sendledger.domain.errors import DependencyUnavailable
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.mailgun.signature import expected_signature
from sendledger.providers.registry import Provider
from sendledger.usecases.context import Services
from tests.conftest import Api
from tests.support.fakes import FakeClock
from tests.support.provider_fixtures import provider_format

PATH = "/v1/providers/mailgun/events"
VECTOR = provider_format("mailgun-webhook-signature-vector.json")
WEBHOOK = provider_format("mailgun-webhook.json")
KEY = VECTOR["signing_key_TEST_ONLY"]
BOUNCED = "unknown-user@example.com"  # the reference webhook's permanent bounce


@pytest.fixture
def enabled(services: Services, clock: FakeClock) -> Services:
    secret = boto3.client("secretsmanager").create_secret(Name="mailgun-webhook-signing-key", SecretString=KEY)
    services.settings = services.settings.model_copy(update={"email_provider": Provider.MAILGUN})
    services.settings = services.settings.configure_provider(MailgunSettings, signing_key_secret_arn=secret["ARN"])
    clock.current = datetime.fromtimestamp(int(VECTOR["timestamp"]) + 5, UTC)
    return services


def post(api: Api, body: str) -> tuple[int, dict[str, str], Any]:
    return api("POST", PATH, raw_body=body)


def signed(clock: FakeClock, event_data: dict[str, Any], key: str = KEY) -> str:
    timestamp, token = str(int(clock.now().timestamp())), secrets.token_hex(25)
    signature = {
        "timestamp": timestamp,
        "token": token,
        "signature": expected_signature(key.encode(), timestamp, token),
    }
    return json.dumps({"signature": signature, "event-data": event_data})


def suppressed(api: Api, address: str) -> bool:
    return bool(api("GET", f"/v1/suppressions/{address.replace('@', '%40')}")[2]["suppressed"])


def test_the_reference_webhook_is_applied_once_and_its_replay_changes_nothing(enabled, api):
    body = json.dumps(WEBHOOK)
    status, headers, answer = post(api, body)
    assert (status, answer) == (200, {"status": "applied"})
    assert suppressed(api, BOUNCED)
    assert post(api, body)[:3:2] == (200, {"status": "duplicate"})  # Mailgun's retry of the same POST


def test_a_wrong_signature_gets_403_and_changes_nothing(enabled, api, clock):
    body = signed(clock, WEBHOOK["event-data"], key="not-the-signing-key")
    status, headers, answer = post(api, body)
    assert status == 403 and headers["content-type"] == "application/problem+json"
    assert answer["type"].endswith("/webhook-signature-invalid")
    assert not suppressed(api, BOUNCED)
    unsigned = json.dumps({"event-data": WEBHOOK["event-data"]})
    assert post(api, unsigned)[0] == 403 and not suppressed(api, BOUNCED)


def test_a_captured_signature_with_another_event_is_a_replay(enabled, api):
    first = json.dumps(WEBHOOK)
    assert post(api, first)[0] == 200
    forged = json.loads(first)
    forged["event-data"]["recipient"] = "victim@example.com"  # the signature does not cover the event
    status, _, answer = post(api, json.dumps(forged))
    assert status == 403 and answer["type"].endswith("/webhook-replayed")
    assert not suppressed(api, "victim@example.com")


def test_a_stale_timestamp_is_refused(enabled, api, clock):
    clock.advance(enabled.settings.provider(MailgunSettings).webhook_max_age_seconds + 1)
    status, _, answer = post(api, json.dumps(WEBHOOK))
    assert status == 403 and answer["type"].endswith("/webhook-signature-stale")
    assert not suppressed(api, BOUNCED)


def test_oversize_malformed_and_not_enabled(enabled, api, clock, services):
    assert post(api, json.dumps({"pad": "x" * 70_000}))[0] == 413
    status, _, answer = post(api, signed(clock, {"event": "delivered"}))  # signed, but no id or time
    assert status == 400 and answer["type"].endswith("/invalid-request")
    assert post(api, signed(clock, {**WEBHOOK["event-data"], "event": "opened"}))[2] == {"status": "ignored"}
    assert api("POST", PATH, raw_body="[1, 2]")[0] == 403


def test_without_a_signing_key_the_route_is_not_found(api, services):
    services.settings = services.settings.model_copy(update={"email_provider": Provider.MAILGUN})
    status, _, answer = post(api, json.dumps(WEBHOOK))
    assert status == 404 and answer["type"].endswith("/not-found")


def test_a_ledger_fault_gets_503_and_mailguns_retry_of_the_same_webhook_is_applied(enabled, api, monkeypatch):
    events = api.runtime.pipeline.events
    apply = events.apply
    calls = {"n": 0}

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise DependencyUnavailable("ledger unavailable: injected")
        return apply(*args, **kwargs)

    monkeypatch.setattr(events, "apply", failing_once)
    body = json.dumps(WEBHOOK)
    status, headers, _ = post(api, body)
    assert status == 503 and "retry-after" in headers
    assert not suppressed(api, BOUNCED)
    assert post(api, body)[:3:2] == (200, {"status": "applied"})  # the token was released
    assert suppressed(api, BOUNCED)
