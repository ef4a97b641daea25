"""A provider's search index lags its sends: its "not found" proves absence only after the grace.

SendGrid's Email Activity and Infrai's `get` answer "not found" for a send they hold until their
index caught up; Mailgun's Events API lists a late `accepted` behind its live position. Inside
UNKNOWN_GRACE_SECONDS a timed-out send stays `unknown` and the provider is not called again;
once the grace passed, a send still not found is absent, and is sent once more, exactly once.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from sendledger.domain.messages import MessageState
from sendledger.domain.provider import Provider
from sendledger.ports.providers import Finding
from sendledger.providers.mailgun.lane import events_lane
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.usecases.intents import LEASE_SECONDS
from tests.unit.fakes import TIMEOUT_LOST, FakeWorld
from tests.unit.fakes.lookups import LaggingIndex
from tests.unit.fakes.mailgun import FakeMailgunEvents
from tests.unit.helpers import ALICE, poll_due_work, seconds_left, send

LOOKUPS = [Provider.SENDGRID, Provider.INFRAI]  # the providers with a lookup API (their slices' lookup)


def with_lookup(world: FakeWorld, provider: Provider, lag: float) -> LaggingIndex:
    """`provider` carries the deployment's email; its lookup's index lags its sends by `lag` seconds."""
    world.configure(email_provider=provider)
    index = LaggingIndex(world.email, world.clock, lag)
    world.runtime.lookups[provider.value] = index
    return index


def state_of(world: FakeWorld, message_id: str) -> MessageState:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message.state


@pytest.mark.parametrize("provider", LOOKUPS, ids=str)
def test_not_found_inside_the_grace_is_no_proof_and_the_accepted_send_is_never_repeated(
    world: FakeWorld, provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The provider accepted the mail, then the sender died before writing the outcome: once its
    # lease ends the send is `unknown` and due at once, long before the grace is over.
    grace = world.settings.unknown_grace_seconds
    index = with_lookup(world, provider, lag=grace - 60)

    def crash(outcome: object) -> None:
        raise RuntimeError("the Lambda died before the outcome write")

    monkeypatch.setattr(world.ledger.messages, "record_outcome", crash)
    with pytest.raises(RuntimeError):
        send(world.runtime)
    monkeypatch.undo()
    [message_id] = [call.message_id for call in world.email.outbox]
    world.clock.advance(LEASE_SECONDS + 1)
    assert poll_due_work(world) == {"lease_expired": 1, "unknown_waiting": 1}
    for _ in range(3):  # the poller asks every few minutes while the index lags
        world.clock.advance((grace - 180) / 3)
        assert poll_due_work(world) == {"unknown_waiting": 1}
        assert state_of(world, message_id) is MessageState.UNKNOWN
    assert [finding for _, finding in index.asked] == [Finding.NOT_FOUND] * 4
    assert len(world.email.calls) == 1, "no provider call while the index may still lag"
    world.clock.advance(120)  # the index caught up, the grace not yet over
    assert poll_due_work(world) == {"unknown_found_by_lookup": 1}
    assert state_of(world, message_id) is MessageState.ACCEPTED
    world.clock.advance(grace)
    assert poll_due_work(world) == {}
    assert len(world.email.calls) == 1 and len(world.email.outbox) == 1, "one mail reached the recipient"


@pytest.mark.parametrize("provider", LOOKUPS, ids=str)
def test_not_found_after_the_grace_proves_absence_and_the_send_is_repeated_once(
    world: FakeWorld, provider: Provider
) -> None:
    grace = world.settings.unknown_grace_seconds
    index = with_lookup(world, provider, lag=30)
    world.email.then(TIMEOUT_LOST)  # the request never reached the provider
    view = send(world.runtime).view
    assert view["state"] == "unknown" and view["provider"] == provider.value
    message_id = view["message_id"]
    world.clock.advance(grace)  # exactly at the end of the grace: still nothing proven
    assert poll_due_work(world) == {"unknown_waiting": 1} and len(world.email.calls) == 1
    world.clock.advance(1)
    assert poll_due_work(world) == {"absence_proven": 1, "resent_accepted": 1}
    assert [call.message_id for call in world.email.calls] == [message_id, message_id], "the same id, once more"
    world.clock.advance(grace)
    assert poll_due_work(world) == {} and len(world.email.calls) == 2
    assert state_of(world, message_id) is MessageState.ACCEPTED and len(index.asked) == 2


FINAL_AFTER = 60  # Mailgun's events are final after this; a late `accepted` may still show up past it


def test_mailgun_a_search_that_finds_nothing_inside_the_grace_proves_nothing(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.configure(email_provider=Provider.MAILGUN)
    world.configure_provider(MailgunSettings, events_final_after_seconds=FINAL_AFTER)
    events = FakeMailgunEvents(world.clock)
    world.email_events_by(lambda settings, stores: events_lane(settings, stores, events))
    grace = world.settings.unknown_grace_seconds
    # One send Mailgun never got (its answer timed out); one it accepted before the sender died
    # (its `accepted` listed late, behind the finality bound: the watermark passes it first)
    world.email.then(TIMEOUT_LOST)
    lost = send(world.runtime, key="k-lost", to="bob@example.com").view["message_id"]

    def crash(outcome: object) -> None:
        raise RuntimeError("the Lambda died before the outcome write")

    monkeypatch.setattr(world.ledger.messages, "record_outcome", crash)
    with pytest.raises(RuntimeError):
        send(world.runtime, key="k-accepted")
    monkeypatch.undo()
    [accepted] = [call.message_id for call in world.email.outbox]
    sent = world.clock.now()
    events.add("accepted", accepted, ALICE, sent, visible_at=sent + timedelta(seconds=grace / 2))
    for _ in range(4):  # the lease ends, the watermark passes both sends; the grace does not
        world.clock.advance(grace / 5)
        world.runtime.poll_cycle.run(seconds_left)
        assert len(world.email.calls) == 2, "no resend inside the grace"
    assert state_of(world, accepted) is MessageState.ACCEPTED, "found by the search once listed"
    assert state_of(world, lost) is MessageState.UNKNOWN
    world.clock.advance(grace / 5 + FINAL_AFTER + 1)
    world.runtime.poll_cycle.run(seconds_left)
    world.runtime.poll_cycle.run(seconds_left)
    assert [call.message_id for call in world.email.calls] == [lost, accepted, lost], "only the lost one, once"
    assert state_of(world, lost) is MessageState.ACCEPTED
