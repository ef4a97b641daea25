"""Mailgun's signed webhooks through the real api handler over moto: verify, refuse, queue; the
poller's webhook lane applies each event once."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from sendledger.bootstrap import Runtime
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.provider import Provider
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.mailgun.signature import expected_signature
from sendledger.usecases.poll import CycleReport
from tests.conftest import Api
from tests.support.fakes import FakeClock, lane_named
from tests.support.provider_fixtures import provider_format

PATH = "/v1/providers/mailgun/events"
VECTOR = provider_format("mailgun-webhook-signature-vector.json")
WEBHOOK = provider_format("mailgun-webhook.json")
KEY = VECTOR["signing_key_TEST_ONLY"]
BOUNCED = "unknown-user@example.com"  # the reference webhook's permanent bounce


@pytest.fixture
def enabled(services: Runtime, clock: FakeClock) -> Runtime:
    secret = boto3.client("secretsmanager").create_secret(Name="mailgun-webhook-signing-key", SecretString=KEY)
    queue = boto3.client("sqs").create_queue(QueueName="mailgun-events", Attributes={"VisibilityTimeout": "0"})
    services.settings = services.settings.replace({"email_provider": Provider.MAILGUN})
    services.settings = services.settings.configure_provider(
        MailgunSettings, signing_key_secret_arn=secret["ARN"], events_queue_url=queue["QueueUrl"]
    )
    clock.current = datetime.fromtimestamp(int(VECTOR["timestamp"]) + 5, UTC)
    return services


def post(api: Api, body: str) -> tuple[int, dict[str, str], Any]:
    return api("POST", PATH, raw_body=body)


def drain(api: Api) -> CycleReport:
    """The poller's webhook lane (the Events API lane is not what these tests are about)."""
    runtime = api.runtime
    report = CycleReport()
    lane_named(runtime, "mailgun-webhooks").run(runtime.sink, runtime.clock.now(), lambda: 60.0, report)
    return report


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


QUEUED = {"received": 1, "queued": 1, "duplicate": False}


def test_the_reference_webhook_is_queued_applied_once_and_its_retry_changes_nothing(enabled, api):
    body = json.dumps(WEBHOOK)
    status, headers, answer = post(api, body)
    assert (status, answer) == (200, QUEUED)
    assert not suppressed(api, BOUNCED), "nothing is applied by the api"
    assert drain(api).applied == 1
    assert suppressed(api, BOUNCED)
    assert post(api, body)[:3:2] == (200, {"received": 1, "queued": 0, "duplicate": True})  # Mailgun's retry
    assert (drain(api).applied, drain(api).duplicates) == (0, 0), "the retry queued nothing"


def test_a_wrong_signature_gets_403_and_changes_nothing(enabled, api, clock):
    body = signed(clock, WEBHOOK["event-data"], key="not-the-signing-key")
    status, headers, answer = post(api, body)
    assert status == 403 and headers["content-type"] == "application/problem+json"
    assert answer["type"].endswith("/webhook-signature-invalid")
    unsigned = json.dumps({"event-data": WEBHOOK["event-data"]})
    assert post(api, unsigned)[0] == 403
    assert drain(api).applied == 0 and not suppressed(api, BOUNCED)


def test_a_captured_signature_with_another_event_is_a_replay(enabled, api):
    first = json.dumps(WEBHOOK)
    assert post(api, first)[0] == 200
    forged = json.loads(first)
    forged["event-data"]["recipient"] = "victim@example.com"  # the signature does not cover the event
    status, _, answer = post(api, json.dumps(forged))
    assert status == 403 and answer["type"].endswith("/webhook-replayed")
    assert drain(api).applied == 1
    assert not suppressed(api, "victim@example.com")


def test_a_stale_timestamp_is_refused(enabled, api, clock):
    clock.advance(enabled.settings.provider(MailgunSettings).webhook_max_age_seconds + 1)
    status, _, answer = post(api, json.dumps(WEBHOOK))
    assert status == 403 and answer["type"].endswith("/webhook-signature-stale")
    assert drain(api).applied == 0 and not suppressed(api, BOUNCED)


def test_oversize_malformed_and_engagement(enabled, api, clock, services):
    assert post(api, json.dumps({"pad": "x" * 70_000}))[0] == 413
    status, _, answer = post(api, signed(clock, {"event": "delivered"}))  # signed, but no id or time
    assert status == 400 and answer["type"].endswith("/invalid-request")
    opened = post(api, signed(clock, {**WEBHOOK["event-data"], "event": "opened"}))
    assert opened[:3:2] == (200, {"received": 1, "queued": 0, "duplicate": False}), "proves nothing: not queued"
    assert api("POST", PATH, raw_body="[1, 2]")[0] == 403


def test_without_a_signing_key_the_route_is_not_found(api, services):
    services.settings = services.settings.replace({"email_provider": Provider.MAILGUN})
    status, _, answer = post(api, json.dumps(WEBHOOK))
    assert status == 404 and answer["type"].endswith("/not-found")


def test_a_queue_fault_gets_503_and_mailguns_retry_of_the_same_webhook_is_queued(enabled, api, monkeypatch):
    hook = api.runtime.webhook("mailgun")
    assert hook is not None and hook.sink is not None
    put = hook.sink.put
    calls = {"n": 0}

    def failing_once(bodies: list[str]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise DependencyUnavailable("queue unavailable: injected")
        put(bodies)

    monkeypatch.setattr(hook.sink, "put", failing_once)
    body = json.dumps(WEBHOOK)
    status, headers, _ = post(api, body)
    assert status == 503 and "retry-after" in headers
    assert post(api, body)[:3:2] == (200, QUEUED)  # the token was released: the retry is no replay
    assert drain(api).applied == 1 and suppressed(api, BOUNCED)
