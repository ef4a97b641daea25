"""Which provider carries a message: the deployment's default, or a caller's pick among the enabled
ones; every later attempt goes through the provider the message recorded."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sendledger.domain.errors import InvalidRequest
from sendledger.domain.provider import Provider
from sendledger.ports.flags import NoFlags
from sendledger.usecases.views import PROVIDER_ACTS, message_view
from tests.unit.fakes import TIMEOUT_LOST, TIMEOUT_REACHED, FakeWorld
from tests.unit.fakes.lookups import LaggingIndex
from tests.unit.fakes.senders import FakeEmailSender
from tests.unit.helpers import command, poll_due_work, seconds_left
from tests.unit.test_flag_routing import CohortFlags


@pytest.fixture
def two_providers(world: FakeWorld) -> FakeEmailSender:
    world.configure(email_providers=frozenset({Provider.MAILGUN}))
    other = FakeEmailSender()
    world.runtime.other_email = {Provider.MAILGUN.value: other}
    return other


def test_a_pick_goes_through_that_provider_and_is_recorded(world: FakeWorld, two_providers: FakeEmailSender) -> None:
    picked = world.runtime.sender.send(replace(command("k-1"), provider="mailgun"), seconds_left)
    assert picked.view["provider"] == "mailgun" and len(two_providers.outbox) == 1 and world.email.outbox == []
    default = world.runtime.sender.send(command("k-2"), seconds_left)
    assert default.view["provider"] == "ses" and len(world.email.outbox) == 1


def test_the_resend_after_proven_absence_follows_the_messages_provider(
    world: FakeWorld, two_providers: FakeEmailSender
) -> None:
    two_providers.then(TIMEOUT_LOST)
    sent = world.runtime.sender.send(replace(command("k-3"), provider="mailgun"), seconds_left)
    assert sent.view["state"] == "unknown"
    world.ledger.poller_state.set_watermark("mailgun", world.clock.now())
    world.clock.advance(1000)
    world.ledger.poller_state.set_watermark("mailgun", world.clock.now())
    assert poll_due_work(world) == {"absence_proven": 1, "resent_accepted": 1}
    assert len(two_providers.outbox) == 1 and world.email.outbox == [], "never through the default provider"


def test_a_pick_the_deployment_does_not_enable_is_a_field_error(world: FakeWorld) -> None:
    with pytest.raises(InvalidRequest) as refused:
        world.runtime.sender.send(replace(command("k-4"), provider="sendgrid"), seconds_left)
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


@pytest.mark.parametrize("chosen_by", ["caller pick", "flag cohort"])
def test_after_a_provider_switch_every_provider_act_in_the_history_names_the_messages_own(
    world: FakeWorld, chosen_by: str
) -> None:
    # Given a message sent through SendGrid, not the deployment's default (SES)
    world.configure(email_providers=frozenset({Provider.SENDGRID}))
    sendgrid = FakeEmailSender(TIMEOUT_LOST, TIMEOUT_REACHED)
    world.runtime.other_email = {Provider.SENDGRID.value: sendgrid}
    world.runtime.lookups[Provider.SENDGRID.value] = LaggingIndex(sendgrid, world.clock, lag_seconds=0)
    chosen = replace(command("k-5"), provider="sendgrid") if chosen_by == "caller pick" else command("k-5")
    if chosen_by == "flag cohort":
        world.runtime.flags = CohortFlags(Provider.SENDGRID)
    sent = world.runtime.sender.send(chosen, seconds_left)
    assert sent.view["provider"] == "sendgrid" and sent.view["state"] == "unknown"
    # When the deployment switches to Mailgun (and the cohort ends) before the message's evidence
    world.configure(email_provider=Provider.MAILGUN, email_providers=frozenset({Provider.SENDGRID, Provider.SES}))
    world.runtime.flags = NoFlags()
    grace = world.settings.unknown_grace_seconds
    world.clock.advance(grace + 1)
    assert poll_due_work(world) == {"absence_proven": 1, "resent_unknown": 1}  # lookup: not found; resent
    world.clock.advance(grace + 1)
    assert poll_due_work(world) == {"unknown_found_by_lookup": 1}  # lookup: the resend was accepted
    # Then every provider act in its history names SendGrid: outcome, resend, lookup
    message = world.ledger.messages.get(sent.message.message_id)
    assert message is not None
    history = message_view(message, world.settings, with_history=True)["history"]
    acts = [entry for entry in history if entry["type"] in PROVIDER_ACTS]
    assert [entry["type"] for entry in acts] == ["provider_outcome", "resend", "provider_outcome", "provider_lookup"]
    assert {entry["provider"] for entry in acts} == {"sendgrid"}, acts
    assert len(sendgrid.calls) == 2 and world.email.calls == []


def test_the_log_subscription_is_the_enabled_provider_whose_statuses_are_written_to_logs(world: FakeWorld) -> None:
    from sendledger.providers.sns.events import encode_subscription_event

    control = {"messageType": "CONTROL_MESSAGE", "logGroup": "", "logEvents": []}
    assert world.runtime.log_subscription.decode(encode_subscription_event(control)).control
    # Infrai reports its SMS statuses by its own API, never to CloudWatch Logs
    world.configure(sms_provider=Provider.INFRAI)
    with pytest.raises(LookupError):
        world.runtime.log_subscription  # the property builds it
