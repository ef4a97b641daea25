"""POST /v1/messages as a use case over the in-memory ledger: at most one provider call per intent."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sendledger.domain import ids
from sendledger.domain.errors import IdempotencyKeyInFlight, IdempotencyKeyReused
from sendledger.domain.events import EventKind
from sendledger.domain.idempotency import scoped_key
from sendledger.domain.messages import DueKind, MessageState
from sendledger.domain.provider import ProviderResponse
from sendledger.domain.recipients import Channel
from sendledger.domain.templates import Rendered
from sendledger.ports.status_out import AcceptedSms
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.results import Accepted, Replayed
from sendledger.usecases.suppressions import change_suppression
from sendledger.usecases.views import message_view
from tests.support.fakes import ADMIN, CALLER
from tests.unit.fakes import THROTTLED, TIMEOUT_LOST, FakeEmailSender, FakeWorld
from tests.unit.helpers import ALICE, PHONE, command, seconds_left, send, ses_event, sms_event


def test_happy_path_is_accepted_with_the_view_it_stored(world: FakeWorld):
    result = send(world.runtime)
    assert isinstance(result, Accepted)
    assert result.view == message_view(result.message, world.settings)
    assert result.view["state"] == "accepted" and result.view["provider_message_id"] == "ses-0001"
    assert [call.to for call in world.email.calls] == [ALICE]
    stored = world.ledger.messages.get(result.message.message_id)
    assert stored is not None and stored.state is MessageState.ACCEPTED
    assert [entry.type.value for entry in stored.history] == ["intent", "provider_outcome"]
    # Answered for good: nothing left for the poller (the in-flight marker went with the outcome)
    assert world.ledger.due_work.count(DueKind.INFLIGHT) == 0


def test_same_key_same_payload_replays_the_stored_answer_without_a_call(world: FakeWorld):
    first = send(world.runtime)
    world.clock.advance(5)
    again = send(world.runtime)
    assert isinstance(again, Replayed)
    assert again.view == first.view
    assert len(world.email.calls) == 1


def test_replay_answers_what_was_answered_not_what_happened_since(world: FakeWorld):
    first = send(world.runtime)
    assert isinstance(first, Accepted)
    world.runtime.sink.apply(
        ses_event(EventKind.DELIVERY, first.message.message_id, world.clock.now()),
        IngestReport(),
    )
    message = world.ledger.messages.get(first.message.message_id)
    assert message is not None and message.state is MessageState.DELIVERED
    again = send(world.runtime)
    assert again.view["state"] == "accepted", "the stored answer; GET /v1/messages/{id} has the news"


def test_same_key_other_payload_is_refused(world: FakeWorld):
    send(world.runtime)
    with pytest.raises(IdempotencyKeyReused):
        send(world.runtime, summary="something else")
    assert len(world.email.calls) == 1


def test_keys_are_scoped_per_caller(world: FakeWorld):
    mine = send(world.runtime)
    theirs = send(world.runtime, principal="arn:aws:iam::123456789012:user/someone-else")
    assert isinstance(theirs, Accepted) and theirs.view["message_id"] != mine.view["message_id"]
    assert len(world.email.calls) == 2


class ReentrantEmail(FakeEmailSender):
    """While the provider call is under way, the same request arrives again."""

    def __init__(self, world: FakeWorld) -> None:
        super().__init__()
        self.world = world
        self.inner: list[Exception] = []

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        try:
            send(self.world.runtime)
        except IdempotencyKeyInFlight as exc:
            self.inner.append(exc)
        return super().send_email(message_id, to, content, escalates=escalates)


def test_same_key_while_the_first_is_in_flight_is_told_to_retry_later(world: FakeWorld):
    world.runtime.email = email = ReentrantEmail(world)
    first = send(world.runtime)
    assert isinstance(first, Accepted) and first.view["state"] == "accepted"
    [in_flight] = email.inner
    assert isinstance(in_flight, IdempotencyKeyInFlight) and in_flight.retry_after_seconds >= 1
    assert len(email.calls) == 1


def test_suppressed_recipient_is_accepted_as_suppressed_without_a_provider_call(world: FakeWorld):
    change_suppression(world.runtime.recipients, world.runtime.clock, ALICE, True, "user asked", ADMIN)
    result = send(world.runtime)
    assert isinstance(result, Accepted)
    assert result.view["state"] == "suppressed" and result.view["reason"] == "recipient suppressed"
    assert world.email.calls == []
    # Its answer is stored like any other: the same key replays it
    assert send(world.runtime).view == result.view


def _recent_send_and_no_watermark(world: FakeWorld) -> None:
    """Alice was just mailed and the poller has not read SES since: her bounce may be on the way."""
    send(world.runtime, key="earlier")
    world.clock.advance(30)


def test_stale_eligibility_with_policy_defer_is_pending_for_the_poller(world: FakeWorld):
    world.configure(stale_eligibility_policy={"alert": "defer"})
    _recent_send_and_no_watermark(world)
    result = send(world.runtime)
    assert isinstance(result, Accepted)
    assert result.view["state"] == "pending" and result.view["retry_after_seconds"] == 60
    assert len(world.email.calls) == 1  # the earlier send only
    [due] = world.ledger.due_work.items(DueKind.PENDING, None, 10)
    assert due.message_id == result.message.message_id
    assert due.due_at == int((world.clock.now() + timedelta(seconds=60)).timestamp())


def test_stale_eligibility_with_policy_allow_sends_and_records_what_labels_it(world: FakeWorld):
    _recent_send_and_no_watermark(world)
    earlier = world.ledger.recipients.get(f"email:{ALICE}")
    result = send(world.runtime)
    assert isinstance(result, Accepted) and result.view["state"] == "accepted"
    message = world.ledger.messages.get(result.message.message_id)
    assert message is not None
    # The intent records its inputs, not a label: no watermark read, the grace, the policy
    intent = message.history[0].evidence
    assert "eligibility" not in intent and "watermark_age_seconds" not in intent
    assert (intent["grace_seconds"], intent["stale_policy"]) == (900, "allow")
    # The recipient's update recorded the send it replaced: the label derived from it is stale
    recorded = world.ledger.db.recipients[f"email:{ALICE}"].recorded
    assert recorded is not None and recorded.message_id == result.message.message_id
    assert (recorded.previous_send_at, recorded.previous_message_id, recorded.stale_after) == (
        earlier.last_send_at,
        earlier.last_message_id,
        None,
    )
    assert recorded.label().value == "eligible_stale"
    assert recorded.evidence()["previous_send_age_seconds"] == 30.0


def test_a_watermark_past_the_last_send_makes_it_eligible_even_under_defer(world: FakeWorld):
    world.configure(stale_eligibility_policy={"alert": "defer"})
    _recent_send_and_no_watermark(world)
    world.clock.advance(world.settings.unknown_grace_seconds)
    world.ledger.poller_state.set_watermark("ses", world.clock.now())
    result = send(world.runtime)
    assert isinstance(result, Accepted) and result.view["state"] == "accepted"
    assert len(world.email.calls) == 2


def test_an_expired_key_used_again_gets_a_new_message_id(world: FakeWorld):
    first = send(world.runtime)
    world.clock.advance(timedelta(days=world.settings.idempotency_retention_days, seconds=1).total_seconds())
    second = send(world.runtime)
    assert isinstance(second, Accepted), "an expired key is a new intent, not a replay"
    scoped = scoped_key(CALLER, "key-1")
    assert first.view["message_id"] == ids.keyed_message_id(scoped, 0)
    assert second.view["message_id"] == ids.keyed_message_id(scoped, 1)
    assert len(world.email.calls) == 2
    # And the new generation replays as usual
    assert send(world.runtime).view == second.view


def test_provider_timeout_is_unknown_with_due_work_after_the_grace(world: FakeWorld):
    world.email.then(TIMEOUT_LOST)
    result = send(world.runtime)
    assert isinstance(result, Accepted)
    assert result.view["state"] == "unknown" and result.view["reason"] == "ReadTimeoutError"
    grace = timedelta(seconds=world.settings.unknown_grace_seconds)
    assert world.ledger.due_work.items(DueKind.UNKNOWN, world.clock.now() + grace - timedelta(seconds=1), 10) == []
    [due] = world.ledger.due_work.items(DueKind.UNKNOWN, world.clock.now() + grace, 10)
    assert due.message_id == result.message.message_id and due.idempotency_key is not None
    assert len(world.email.calls) == 1, "a timeout is never retried blindly"


def test_throttled_sends_are_retried_with_backoff_then_left_pending(world: FakeWorld):
    world.email.then(THROTTLED, THROTTLED, THROTTLED, THROTTLED)
    result = send(world.runtime)
    assert result.view["state"] == "pending"
    assert len(world.email.calls) == 4  # Backoff.max_attempts, each certainly not accepted
    assert world.ledger.due_work.count(DueKind.PENDING) == 1


def test_sms_outcome_leaves_the_receipt_to_the_publisher_and_a_record_that_comes_first_writes_it(world: FakeWorld):
    result = world.runtime.sender.send(command(channel=Channel.SMS, to=PHONE), seconds_left)
    assert result.view["state"] == "accepted" and result.view["provider_message_id"] == "sns-0001"
    message_id = result.view["message_id"]
    # The send path wrote the message alone: the receipt is the publisher's, from the stream
    assert ("PMID", "sns-0001") not in world.ledger.db.receipts
    # A status record that arrives first finds the send through the number's last send, which names its id
    record = sms_event("sns-0001", world.clock.now())
    applied = world.runtime.sink.apply(record, IngestReport())
    receipt = world.ledger.db.receipts[("PMID", "sns-0001")]
    assert not applied.duplicate and applied.message_updated
    assert receipt.message_id == message_id and receipt.state is MessageState.DELIVERED
    assert receipt.escalates is None  # not known to the record: a marker's poller reads the message
    # The publisher's write merges with it: the record's state and entry stay, and a duplicate is one
    world.ledger.sms_receipts.write(AcceptedSms(message_id, "sns-0001", escalates=False))
    again = world.runtime.sink.apply(record, IngestReport())
    assert again.duplicate and receipt.state is MessageState.DELIVERED and receipt.escalates is False
    assert [e.type.value for e in receipt.history.entries()] == ["event:SmsSuccess"]
    assert world.runtime.messages.get(message_id).state is MessageState.DELIVERED
