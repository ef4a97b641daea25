"""Which provider carries a message: the deployment's default, or a caller's pick among the enabled
ones; every later attempt goes through the provider the message recorded."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sendledger.domain.errors import InvalidRequest
from sendledger.domain.provider import Provider
from sendledger.usecases.send import send_message
from tests.unit.fakes import TIMEOUT_LOST, FakeWorld
from tests.unit.fakes.senders import FakeEmailSender
from tests.unit.helpers import command, poll_due_work, seconds_left


@pytest.fixture
def two_providers(world: FakeWorld) -> FakeEmailSender:
    world.configure(email_providers=frozenset({Provider.MAILGUN}))
    other = FakeEmailSender()
    world.services.other_email = {Provider.MAILGUN.value: other}
    return other


def test_a_pick_goes_through_that_provider_and_is_recorded(world: FakeWorld, two_providers: FakeEmailSender) -> None:
    picked = send_message(world.services, replace(command("k-1"), provider="mailgun"), seconds_left)
    assert picked.view["provider"] == "mailgun" and len(two_providers.outbox) == 1 and world.email.outbox == []
    default = send_message(world.services, command("k-2"), seconds_left)
    assert default.view["provider"] == "ses" and len(world.email.outbox) == 1


def test_the_resend_after_proven_absence_follows_the_messages_provider(
    world: FakeWorld, two_providers: FakeEmailSender
) -> None:
    two_providers.then(TIMEOUT_LOST)
    sent = send_message(world.services, replace(command("k-3"), provider="mailgun"), seconds_left)
    assert sent.view["state"] == "unknown"
    world.ledger.poller_state.set_watermark("mailgun", world.clock.now())
    world.clock.advance(1000)
    world.ledger.poller_state.set_watermark("mailgun", world.clock.now())
    assert poll_due_work(world) == {"absence_proven": 1, "resent_accepted": 1}
    assert len(two_providers.outbox) == 1 and world.email.outbox == [], "never through the default provider"


def test_a_pick_the_deployment_does_not_enable_is_a_field_error(world: FakeWorld) -> None:
    with pytest.raises(InvalidRequest) as refused:
        send_message(world.services, replace(command("k-4"), provider="sendgrid"), seconds_left)
    assert refused.value.errors[0]["field"] == "provider"
    assert world.email.outbox == []


def test_an_injected_timeout_drops_only_the_answer_of_an_accepted_labelled_send() -> None:
    from sendledger.domain.provider import CallResult
    from sendledger.domain.templates import Rendered
    from sendledger.providers.injected import TimeoutAfterAcceptance

    inner = FakeEmailSender()
    injected = TimeoutAfterAcceptance(inner)
    mail = Rendered(subject="s", text="t", html=None)
    labelled = injected.send_email("m-1", "erin+timeout-accepted@example.com", mail, escalates=False)
    assert labelled.result is CallResult.AMBIGUOUS and len(inner.outbox) == 1, "the provider has it"
    assert injected.send_email("m-2", "erin@example.com", mail, escalates=False).result is CallResult.ACCEPTED
