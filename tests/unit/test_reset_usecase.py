"""Password resets as use cases over the in-memory ledger: one active token, single use, lockout."""

from __future__ import annotations

from sendledger.domain import tokens
from sendledger.domain.messages import DueKind, MessageState
from sendledger.usecases.resets import consume_reset, request_reset
from sendledger.usecases.results import TokenConsumed, TokenRefused
from sendledger.usecases.suppressions import change_suppression
from tests.support.fakes import ADMIN, PRINCIPAL
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import ALICE, poll_due_work, tokens_mailed

ACCOUNT = "acct-1"


def request(world: FakeWorld, email: str = ALICE):
    return request_reset(world.services, ACCOUNT, email, PRINCIPAL)


def test_request_answers_before_any_mail_and_the_poller_mails_one_token(world: FakeWorld):
    reset = request(world)
    assert world.email.calls == [], "answered before any provider call"
    record = world.ledger.resets.get(ACCOUNT)
    assert record is not None and record.reset_id == reset.reset_id and record.state == "active"
    assert world.ledger.due_work.count(DueKind.PENDING) == 1
    assert poll_due_work(world) == {"reset_resent": 1}
    [token] = tokens_mailed(world)
    stored = world.ledger.resets.get(ACCOUNT)
    assert stored is not None and stored.token_hash == tokens.token_hash(token)
    message = world.ledger.messages.get(stored.message_id)
    assert message is not None and message.state is MessageState.ACCEPTED and message.params is None


def test_a_second_request_inside_the_window_returns_the_same_reset_and_mails_nothing(world: FakeWorld):
    first = request(world)
    poll_due_work(world)
    world.clock.advance(60)
    second = request(world)
    assert second == first
    poll_due_work(world)
    assert len(tokens_mailed(world)) == 1


def test_a_request_after_the_window_replaces_the_reset_and_its_token(world: FakeWorld):
    request(world)
    poll_due_work(world)
    world.clock.advance(world.settings.reset_window_seconds + 1)
    second = request(world)
    poll_due_work(world)
    old, new = tokens_mailed(world)
    assert consume_reset(world.services, ACCOUNT, old) == TokenRefused()
    assert consume_reset(world.services, ACCOUNT, new) == TokenConsumed(second.reset_id, ACCOUNT)


def test_a_token_is_consumed_once(world: FakeWorld):
    reset = request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    assert consume_reset(world.services, ACCOUNT, token) == TokenConsumed(reset.reset_id, ACCOUNT)
    assert consume_reset(world.services, ACCOUNT, token) == TokenRefused()


def test_wrong_tokens_lock_the_reset_after_the_limit(world: FakeWorld):
    request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    limit = world.settings.reset_max_failed_attempts
    for _ in range(limit - 1):
        assert consume_reset(world.services, ACCOUNT, "A" * 43) == TokenRefused()
    record = world.ledger.resets.get(ACCOUNT)
    assert record is not None and (record.state, record.failed_attempts) == ("active", limit - 1)
    assert consume_reset(world.services, ACCOUNT, "A" * 43) == TokenRefused()
    record = world.ledger.resets.get(ACCOUNT)
    assert record is not None and record.state == "invalidated"
    assert consume_reset(world.services, ACCOUNT, token) == TokenRefused(), "locked: even the right token"


def test_an_expired_token_is_refused(world: FakeWorld):
    request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    world.clock.advance(world.settings.reset_window_seconds)
    assert consume_reset(world.services, ACCOUNT, token) == TokenRefused()


def test_a_suppressed_address_gets_the_same_answer_and_no_mail(world: FakeWorld):
    change_suppression(world.services, ALICE, True, "complaint", ADMIN)
    reset = request(world)
    assert reset.reset_id.startswith("rst_")
    poll_due_work(world)
    assert world.email.calls == []


def test_suppression_between_request_and_mail_stops_the_mail(world: FakeWorld):
    request(world)
    change_suppression(world.services, ALICE, True, "complaint arrived", ADMIN)
    poll_due_work(world)
    assert world.email.calls == []
    record = world.ledger.resets.get(ACCOUNT)
    assert record is not None
    message = world.ledger.messages.get(record.message_id)
    assert message is not None and message.state is MessageState.SUPPRESSED
