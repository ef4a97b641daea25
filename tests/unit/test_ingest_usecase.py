"""Applying delivery events as a use case over the in-memory ledger: each once, never backwards."""

from __future__ import annotations

from datetime import timedelta

from sendledger.domain.events import EventKind
from sendledger.domain.messages import DueKind, MessageState
from sendledger.domain.recipients import Channel
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.results import Accepted
from tests.unit.fakes import TIMEOUT_LOST, FakeWorld
from tests.unit.helpers import ALICE, PHONE, command, seconds_left, send, ses_event, sms_event


def sent(world: FakeWorld) -> str:
    result = send(world.runtime)
    assert isinstance(result, Accepted)
    return result.message.message_id


def ingest(world: FakeWorld, event, report: IngestReport | None = None):
    return world.runtime.sink.apply(event, report or IngestReport())


def state_of(world: FakeWorld, message_id: str) -> MessageState:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message.state


def test_a_permanent_bounce_suppresses_the_recipient_once(world: FakeWorld):
    message_id, report = sent(world), IngestReport()
    world.clock.advance(5)
    first = ingest(world, ses_event(EventKind.BOUNCE, message_id, world.clock.now(), event_id="b-1"), report)
    assert first.suppressed_now and not first.already_suppressed
    recipient = world.ledger.recipients.get(f"email:{ALICE}")
    assert recipient.suppression.suppressed and recipient.suppression.version == 1
    assert recipient.suppression.reason == "bounce: Permanent/General"
    assert state_of(world, message_id) is MessageState.BOUNCED
    # A second bounce (another event) finds the recipient suppressed: no second suppression
    again = ingest(world, ses_event(EventKind.BOUNCE, message_id, world.clock.now(), event_id="b-2"), report)
    assert not again.suppressed_now and again.already_suppressed
    assert world.ledger.recipients.get(f"email:{ALICE}").suppression.version == 1
    assert (report.applied, report.suppressed) == (2, 1)
    # And the next send to her is decided without a provider call
    assert send(world.runtime, key="key-2").view["state"] == "suppressed"
    assert len(world.email.calls) == 1


def test_a_redelivered_event_is_a_duplicate_and_changes_nothing(world: FakeWorld):
    message_id, report = sent(world), IngestReport()
    event = ses_event(EventKind.DELIVERY, message_id, world.clock.now())
    assert not ingest(world, event, report).duplicate
    message = world.ledger.messages.get(message_id)
    assert message is not None
    world.clock.advance(60)
    assert ingest(world, event, report).duplicate
    assert world.ledger.messages.get(message_id) == message
    assert (report.applied, report.duplicates) == (1, 1)


def test_a_late_delivery_does_not_undo_a_bounce(world: FakeWorld):
    message_id = sent(world)
    ingest(world, ses_event(EventKind.BOUNCE, message_id, world.clock.now()))
    world.clock.advance(60)
    late = ingest(world, ses_event(EventKind.DELIVERY, message_id, world.clock.now() - timedelta(seconds=50)))
    assert not late.duplicate and not late.message_updated and late.prior_state == "bounced"
    message = world.ledger.messages.get(message_id)
    assert message is not None and message.state is MessageState.BOUNCED
    assert message.reason == "bounce: Permanent/General"
    delivery = next(e for e in message.history if e.type.value == "event:Delivery")
    assert (delivery.state, delivery.evidence["state_unchanged"], delivery.evidence["would_be"]) == (
        None,
        "bounced",
        "delivered",
    )


def test_a_complaint_after_delivery_moves_the_message_on(world: FakeWorld):
    message_id = sent(world)
    ingest(world, ses_event(EventKind.DELIVERY, message_id, world.clock.now()))
    result = ingest(world, ses_event(EventKind.COMPLAINT, message_id, world.clock.now()))
    assert result.message_updated and result.suppressed_now
    assert state_of(world, message_id) is MessageState.COMPLAINED


def test_transient_bounces_suppress_at_the_limit_inside_the_window(world: FakeWorld):
    message_id, counts = sent(world), []
    for n in range(world.settings.transient_bounce_limit):
        world.clock.advance(3600)
        event = ses_event(
            EventKind.BOUNCE, message_id, world.clock.now(), event_id=f"t-{n}", bounce=("Transient", "MailboxFull")
        )
        result = ingest(world, event)
        counts.append((result.transient_count, result.suppressed_now))
    assert counts == [(1, False), (2, False), (3, True)]
    assert world.ledger.recipients.get(f"email:{ALICE}").suppression.suppressed


def test_transient_bounces_outside_the_window_do_not_add_up(world: FakeWorld):
    message_id = sent(world)
    window = timedelta(days=world.settings.transient_bounce_window_days)
    for n in range(world.settings.transient_bounce_limit):
        world.clock.advance(window.total_seconds() + 1)
        event = ses_event(EventKind.BOUNCE, message_id, world.clock.now(), event_id=f"t-{n}", bounce=("Transient", "X"))
        assert ingest(world, event).transient_count == 1
    assert not world.ledger.recipients.get(f"email:{ALICE}").suppression.suppressed


def test_an_event_for_no_message_still_suppresses_and_is_deduplicated(world: FakeWorld):
    event = ses_event(EventKind.COMPLAINT, None, world.clock.now(), recipient="carol@example.com")
    report = IngestReport()
    first = ingest(world, event, report)
    assert first.suppressed_now and report.unmatched == 1
    assert ingest(world, event, report).duplicate
    assert world.ledger.recipients.get("email:carol@example.com").suppression.version == 1


def test_an_sms_status_for_a_timed_out_publish_finds_its_send_by_the_destination(world: FakeWorld):
    world.sms.then(TIMEOUT_LOST)
    result = world.runtime.sender.send(command(channel=Channel.SMS, to=PHONE), seconds_left)
    assert result.view["state"] == "unknown"
    world.clock.advance(10)
    # SNS's id was never learned: no receipt under it, so the record matches the last send to the number
    applied = ingest(world, sms_event("sns-unseen", world.clock.now()))
    assert not applied.duplicate and applied.message_updated and not applied.no_receipt
    message = world.ledger.messages.get(result.view["message_id"])
    assert message is not None and message.state is MessageState.DELIVERED
    assert message.provider_message_id == "sns-unseen"
    # The event wrote the receipt, not the message: its unknown marker waits for the poller to drop it
    assert world.ledger.due_work.items(DueKind.UNKNOWN, None, 10)[0].message_id == message.message_id
    assert ingest(world, sms_event("sns-unseen", world.clock.now())).duplicate


def test_an_sms_status_lands_on_the_receipt_the_outcome_wrote(world: FakeWorld):
    result = world.runtime.sender.send(command(channel=Channel.SMS, to=PHONE), seconds_left)
    failure = ingest(
        world, sms_event("sns-0001", world.clock.now(), success=False, response="Phone number is opted out")
    )
    assert failure.message_updated and failure.suppressed_now
    message = world.ledger.messages.get(result.view["message_id"])
    assert message is not None and message.state is MessageState.FAILED
    assert message.reason == "sms: Phone number is opted out"
    [due] = world.ledger.due_work.items(DueKind.OUTCOME, None, 10)
    assert (due.receipt_id, due.message_id) == ("sns-0001", message.message_id)
