"""The contract every email provider keeps: the same requests, states and evidence as SES.

Each test runs once per provider world (worlds.WORLDS): the real api and poller over moto,
the provider's adapter against the local simulator, its events by its own path.
"""

from __future__ import annotations

from typing import Any

from tests.providers.worlds import ProviderWorld, poll

SUCCESS = "success@simulator.amazonses.com"
BOUNCE = "bounce@simulator.amazonses.com"
COMPLAINT = "complaint@simulator.amazonses.com"


def send(world: ProviderWorld, to: str, key: str = "k-1", **extra: Any) -> dict[str, Any]:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = world.parts.api("POST", "/v1/messages", {**body, **extra}, headers={"Idempotency-Key": key})
    assert status == 202, view
    return view


def view(world: ProviderWorld, message_id: str) -> dict[str, Any]:
    status, _, body = world.parts.api("GET", f"/v1/messages/{message_id}")
    assert status == 200
    return body


def suppressed(world: ProviderWorld, address: str) -> bool:
    _, _, body = world.parts.api("GET", f"/v1/suppressions/{address.replace('@', '%40')}")
    return bool(body["suppressed"])


def test_success_is_accepted_then_delivered_and_names_the_provider(world: ProviderWorld) -> None:
    sent = send(world, SUCCESS)
    assert sent["state"] == "accepted" and sent["provider"] == world.provider.value
    assert sent["provider_message_id"]
    world.parts.clock.advance(5)
    poll(world)
    message = view(world, sent["message_id"])
    assert message["state"] == "delivered"
    [entry] = world.outbox()
    assert entry["provider"] == world.provider.value and entry["to"] == SUCCESS
    assert not suppressed(world, SUCCESS)


def test_bounce_suppresses_and_the_next_send_makes_no_provider_call(world: ProviderWorld) -> None:
    sent = send(world, BOUNCE)
    world.parts.clock.advance(5)
    poll(world)
    assert view(world, sent["message_id"])["state"] == "bounced"
    assert suppressed(world, BOUNCE)
    again = send(world, BOUNCE, key="k-2")
    assert again["state"] == "suppressed"
    assert len(world.outbox()) == 1


def test_complaint_suppresses(world: ProviderWorld) -> None:
    sent = send(world, COMPLAINT)
    world.parts.clock.advance(5)
    poll(world)
    assert view(world, sent["message_id"])["state"] == "complained"
    assert suppressed(world, COMPLAINT)
