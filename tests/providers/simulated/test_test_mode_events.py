"""Test mode with SendGrid or Mailgun as the deployment's email provider, through the api handler
and the poller against moto.

A test caller's send reaches no provider: the simulated carrier answers by the simulator's rules
and puts the provider's own events on that provider's webhook events queue, in the shape the
verified intake queues them (SendGrid's events, Mailgun's `event-data`), with the simulated
provider message id where the provider's message id goes. The poller's queue lane applies them
like verified webhook events, and ingestion keeps the suppression in the test caller's namespace.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import boto3
import pytest

from sendledger import bootstrap
from sendledger.bootstrap import Runtime
from sendledger.domain.provider import Provider
from tests.conftest import TABLE
from tests.providers.conftest import built_world
from tests.providers.worlds import MailgunWorld, ProviderWorld, infrai_world, mailgun_world, poll, sendgrid_world
from tests.support.fakes import ADMIN, FakeClock, caller_id

TESTER = "arn:aws:iam::123456789012:role/tester-app"
BOUNCE = "bounce@simulator.amazonses.com"
COMPLAINT = "complaint@simulator.amazonses.com"
OWN_EVENTS = {"sendgrid": {"processed", "bounce"}, "mailgun": {"accepted", "failed"}, "infrai": {"bounced"}}

BUILDERS = {
    Provider.SENDGRID: sendgrid_world,
    Provider.MAILGUN: partial(mailgun_world, webhooks=True),
    Provider.INFRAI: infrai_world,  # pushes nothing: its status lane answers a test message from the rules
}


@pytest.fixture(params=sorted(BUILDERS), ids=str)
def world(
    request: pytest.FixtureRequest, services: Runtime, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderWorld]:
    """The provider's world with TESTER marked test (the callers' admin route) and the simulated
    carriers wired as bootstrap wires them from the world's settings, on the test clock."""
    with built_world(BUILDERS[request.param], request.param, services, clock, monkeypatch) as built:
        api = built.parts.api
        status, _, view = api("PUT", f"/v1/admin/callers/{caller_id(TESTER)}", {"test_mode": True}, principal=ADMIN)
        assert status == 200 and view["test_mode"] is True, view
        services.simulated = bootstrap.simulated_carriers(services.settings, clock)
        yield built


def post(world: ProviderWorld, to: str, key: str, principal: str | None = None) -> dict:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    kwargs = {"principal": principal} if principal else {}
    status, _, view = world.parts.api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, **kwargs)
    assert status == 202, view
    return view


def shown(world: ProviderWorld, message_id: str, principal: str | None = None) -> dict:
    kwargs = {"principal": principal} if principal else {}
    status, _, view = world.parts.api("GET", f"/v1/messages/{message_id}", **kwargs)
    assert status == 200
    return view


def suppressed(world: ProviderWorld, address: str) -> bool:
    _, _, view = world.parts.api("GET", f"/v1/suppressions/{address.replace('@', '%40')}")
    return bool(view["suppressed"])


def suppression_items() -> list[str]:
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    return sorted(item["pk"]["S"] for item in items if item["pk"]["S"].startswith("SUP#"))


def provider_requests(world: ProviderWorld) -> int:
    """Requests to the provider's API about messages (Mailgun: its sends; the Events API lane pages
    Mailgun's whole log, never asking about one message)."""
    if isinstance(world, MailgunWorld):
        return world.mailgun.calls
    return len(world.http.requests)  # type: ignore[attr-defined]  # SendGrid's and Infrai's worlds


def test_a_test_callers_bounce_comes_through_the_providers_ingestion_and_never_suppresses_the_real_one(
    world: ProviderWorld,
) -> None:
    provider = world.provider.value
    # When the test caller sends to the bounce address
    view = post(world, BOUNCE, "t-1", principal=TESTER)
    # Then no provider was called, and the answer names the carrier and says test
    assert view["state"] == "accepted" and view["test"] is True and view["provider"] == provider
    assert view["provider_message_id"].startswith(f"sendledger-test.{caller_id(TESTER)}.")
    assert world.outbox() == [] and world.parts.simulator.outbox() == []
    assert provider_requests(world) == 0
    # And the poller applies the simulated events from the provider's webhook events queue
    world.parts.clock.advance(5)
    poll(world)
    found = shown(world, view["message_id"], TESTER)
    assert found["state"] == "bounced" and found["test"] is True, found
    assert all(entry["test"] is True for entry in found["history"])
    events = [entry for entry in found["history"] if entry["type"].startswith("event:")]
    assert events and all(entry["provider"] == provider for entry in events), events
    assert {entry["provider_event"] for entry in events} <= OWN_EVENTS[provider], events
    assert all(entry["provider_event_id"] and entry["event_id"] for entry in events)
    assert provider_requests(world) == 0  # nor did ingestion ask the provider about it
    # The suppression is the test caller's own: the real recipient is not suppressed
    assert not suppressed(world, BOUNCE)
    assert suppression_items() == [f"SUP#test:{caller_id(TESTER)}:email:{BOUNCE}"]
    # And a real caller's send to the same address goes to the real provider (its simulator)
    real = post(world, BOUNCE, "r-1")
    assert real["state"] == "accepted" and "test" not in real
    assert [entry["to"] for entry in world.outbox()] == [BOUNCE]
    world.parts.clock.advance(15)
    poll(world)
    real_found = shown(world, real["message_id"])
    assert real_found["state"] == "bounced" and "test" not in real_found
    assert suppressed(world, BOUNCE)  # the real bounce suppresses the real recipient, as ever


def test_a_test_callers_complaint_is_delivered_then_complained_in_its_own_namespace(world: ProviderWorld) -> None:
    view = post(world, COMPLAINT, "t-c", principal=TESTER)
    world.parts.clock.advance(5)
    poll(world)
    found = shown(world, view["message_id"], TESTER)
    assert found["state"] == "complained" and found["test"] is True, found
    assert any(entry["type"] == "event:Complaint" for entry in found["history"]), found["history"]
    assert not suppressed(world, COMPLAINT)
    assert suppression_items() == [f"SUP#test:{caller_id(TESTER)}:email:{COMPLAINT}"]
    assert world.outbox() == [] and provider_requests(world) == 0
