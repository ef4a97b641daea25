"""The contract every email provider keeps: the same requests, states and evidence as SES.

Each test runs once per provider world (worlds.WORLDS): the real api and poller over moto,
the provider's adapter against the local simulator, its events by its own path.
"""

from __future__ import annotations

import re
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


# Each provider's own names of the events a delivered message produces (never SES's for another).
OWN_EVENT_NAMES = {
    "ses": {"Send", "Delivery"},
    "sendgrid": {"processed", "delivered"},
    "mailgun": {"accepted", "delivered"},
    "infrai": {"delivered"},
}


def test_every_history_entry_names_the_provider_and_its_own_event_name_and_id(world: ProviderWorld) -> None:
    sent = send(world, SUCCESS)
    world.parts.clock.advance(15)
    poll(world)
    message = view(world, sent["message_id"])
    assert message["state"] == "delivered" and message["provider"] == world.provider.value
    events = [entry for entry in message["history"] if entry["type"].startswith("event:")]
    assert events, "the provider's events are in the history"
    for entry in events:
        assert entry["provider"] == world.provider.value
        assert entry["provider_event"] in OWN_EVENT_NAMES[world.provider.value], entry
        assert entry["provider_event_id"] and entry["event_id"]
    assert any(entry["type"] == "event:Delivery" for entry in events)
    [outcome] = [entry for entry in message["history"] if entry["type"] == "provider_outcome"]
    assert outcome["provider"] == world.provider.value and outcome["provider_message_id"]


def test_bounce_suppresses_and_the_next_send_makes_no_provider_call(world: ProviderWorld) -> None:
    sent = send(world, BOUNCE)
    world.parts.clock.advance(5)
    poll(world)
    bounced = view(world, sent["message_id"])
    assert bounced["state"] == "bounced"
    assert suppressed(world, BOUNCE)
    # The reasons read alike whichever provider carried it: `bounce: <what the provider said>`
    # The free-text reason is the admin view's (a caller's view shows its reason class).
    _, _, suppression = world.parts.api("GET", f"/v1/admin/suppressions/{BOUNCE.replace('@', '%40')}")
    for reason in (bounced["reason"], suppression["reason"]):
        assert re.fullmatch(r"bounce: \S.*", reason), reason
    again = send(world, BOUNCE, key="k-2")
    assert again["state"] == "suppressed"
    assert len(world.outbox()) == 1


def test_complaint_suppresses(world: ProviderWorld) -> None:
    sent = send(world, COMPLAINT)
    world.parts.clock.advance(5)
    poll(world)
    assert view(world, sent["message_id"])["state"] == "complained"
    assert suppressed(world, COMPLAINT)


def test_a_complaint_after_delivery_suppresses(world: ProviderWorld) -> None:
    """The design note's story (send at 10:00, complaint at 10:01): the provider reports the
    delivery first and the complaint later; the recipient ends suppressed all the same, whether
    the provider pushes its events or is asked for them (a delivered message is still read)."""
    sent = send(world, COMPLAINT)
    world.parts.clock.advance(2)  # delivered after 1.5 s; the complaint comes at 3 s
    poll(world)
    assert view(world, sent["message_id"])["state"] in ("delivered", "complained")  # SES may carry both at once
    for _ in range(COMPLAINT_POLLS):
        if suppressed(world, COMPLAINT):
            break
        world.parts.clock.advance(1)
        poll(world)
    assert suppressed(world, COMPLAINT), f"no suppression {COMPLAINT_POLLS} s after the complaint"
    assert view(world, sent["message_id"])["state"] == "complained"
    assert send(world, COMPLAINT, key="k-2")["state"] == "suppressed"
    assert len(world.outbox()) == 1


COMPLAINT_POLLS = 10  # one-second steps: the worlds ask Infrai every second (worlds.py)


def test_timeout_after_acceptance_resolves_by_the_event_without_a_resend(world: ProviderWorld) -> None:
    sent = send(world, "alice+timeout-accepted@example.com")
    assert sent["state"] == "unknown"
    world.parts.clock.advance(5)
    poll(world)  # the provider's own events prove the send was accepted
    assert view(world, sent["message_id"])["state"] == "delivered"
    world.parts.clock.advance(1000)  # past the grace: the unknown marker (if still there) comes due
    report = poll(world)
    assert not {"absence_proven", "resent_accepted"} & set(report.resolved), report.resolved
    assert len(world.outbox()) == 1


def test_timeout_before_acceptance_is_resent_once_after_absence_is_proven(world: ProviderWorld) -> None:
    sent = send(world, "bob+timeout-lost@example.com")
    assert sent["state"] == "unknown" and world.outbox() == []
    world.parts.clock.advance(60)
    assert poll(world).resolved == {}  # before send time + grace nothing is provable
    world.parts.clock.advance(900)
    report = poll(world)
    assert report.resolved == {"absence_proven": 1, "resent_accepted": 1}
    message = view(world, sent["message_id"])
    assert message["state"] == "accepted" and message["provider_message_id"]
    assert [entry["to"] for entry in world.outbox()] == ["bob+timeout-lost@example.com"]
    world.parts.clock.advance(5)
    poll(world)
    assert view(world, sent["message_id"])["state"] == "delivered"
    world.parts.clock.advance(2000)
    poll(world)
    assert len(world.outbox()) == 1, "resent once, never twice"


def test_throttling_is_retried_with_backoff_and_sent_once(world: ProviderWorld) -> None:
    sent = send(world, "carol+throttle@example.com")
    assert sent["state"] == "accepted"
    history = view(world, sent["message_id"])["history"]
    assert [entry.get("attempts") for entry in history if entry["type"] == "provider_outcome"] == [3]
    assert len(world.outbox()) == 1


def test_a_bounce_before_the_deadline_escalates_to_the_fallback_once(world: ProviderWorld) -> None:
    escalation = {"deadline_seconds": 300, "fallback": [{"channel": "email", "to": SUCCESS}]}
    sent = send(world, BOUNCE, category="alert", escalation=escalation)
    world.parts.clock.advance(5)
    report = poll(world)
    assert report.escalated == 1
    message = view(world, sent["message_id"])
    assert message["state"] == "escalated"
    fallback = view(world, message["history"][-1]["fallback_message_id"])
    assert fallback["to"] == SUCCESS and fallback["provider"] == world.provider.value
    world.parts.clock.advance(60)
    assert poll(world).escalated == 0
    assert [entry["to"] for entry in world.outbox()] == [BOUNCE, SUCCESS]


def test_password_reset_mails_one_active_token(world: ProviderWorld) -> None:
    api = world.parts.api
    request = {"account_id": "acct-1", "email": "dave@example.com"}
    status, _, first = api("POST", "/v1/password-resets", request)
    assert status == 202
    poll(world)  # the poller mints the token and mails the link
    status, _, again = api("POST", "/v1/password-resets", request)
    assert again["reset_id"] == first["reset_id"]
    poll(world)
    [mail] = world.outbox()
    token = re.search(r"token=([A-Za-z0-9_-]+)", mail["text"])
    assert token is not None
    consume = {"account_id": "acct-1", "token": token.group(1)}
    assert api("POST", "/v1/password-resets/consume", consume)[0] == 200
    assert api("POST", "/v1/password-resets/consume", consume)[0] == 400, "single use"
