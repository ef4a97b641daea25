"""Password resets as use cases over the in-memory ledger: one active token, single use, lockout."""

from __future__ import annotations

from sendledger.domain import tokens
from sendledger.domain.messages import DueKind, MessageState
from sendledger.usecases.evidence import reset_evidence
from sendledger.usecases.results import TokenConsumed, TokenRefused
from sendledger.usecases.suppressions import change_suppression
from tests.support.fakes import ADMIN, CALLER, caller_id
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import ALICE, poll_due_work, tokens_mailed

ACCOUNT = "acct-1"


def request(world: FakeWorld, email: str = ALICE):
    return world.runtime.reset_requests.request(CALLER, ACCOUNT, email)


def test_request_answers_before_any_mail_and_the_poller_mails_one_token(world: FakeWorld):
    reset = request(world)
    assert world.email.calls == [], "answered before any provider call"
    record = world.ledger.resets.get(CALLER, ACCOUNT)
    assert record is not None and record.reset_id == reset.reset_id and record.state == "active"
    assert world.ledger.due_work.count(DueKind.PENDING) == 1
    assert poll_due_work(world) == {"reset_sent": 1}  # the first mail, not a resend
    [token] = tokens_mailed(world)
    stored = world.ledger.resets.get(CALLER, ACCOUNT)
    assert stored is not None and stored.token_hash == tokens.token_hash(token)
    message = world.ledger.messages.get(stored.message_id)
    assert message is not None and message.state is MessageState.ACCEPTED and message.params is None
    [call] = world.email.calls
    assert call.content.tracking is False, "no provider may rewrite the link into its click tracker"


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
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, old) == TokenRefused()
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, new) == TokenConsumed(second.reset_id, ACCOUNT)


def test_a_token_is_consumed_once(world: FakeWorld):
    reset = request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, token) == TokenConsumed(reset.reset_id, ACCOUNT)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, token) == TokenRefused()


def test_wrong_tokens_lock_the_reset_after_the_limit(world: FakeWorld):
    request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    limit = world.settings.reset_max_failed_attempts
    for _ in range(limit - 1):
        assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, "A" * 43) == TokenRefused()
    record = world.ledger.resets.get(CALLER, ACCOUNT)
    assert record is not None and (record.state, record.failed_attempts) == ("active", limit - 1)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, "A" * 43) == TokenRefused()
    record = world.ledger.resets.get(CALLER, ACCOUNT)
    assert record is not None and record.state == "invalidated"
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, token) == TokenRefused(), "locked: even the right token"


def test_an_expired_token_is_refused(world: FakeWorld):
    request(world)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    world.clock.advance(world.settings.reset_window_seconds)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, token) == TokenRefused()


def test_a_suppressed_address_gets_the_same_answer_and_no_mail(world: FakeWorld):
    change_suppression(world.runtime.recipients, world.runtime.clock, ALICE, True, "complaint", ADMIN)
    reset = request(world)
    assert reset.reset_id.startswith("rst_")
    poll_due_work(world)
    assert world.email.calls == []


def test_suppression_between_request_and_mail_stops_the_mail(world: FakeWorld):
    request(world)
    change_suppression(world.runtime.recipients, world.runtime.clock, ALICE, True, "complaint arrived", ADMIN)
    poll_due_work(world)
    assert world.email.calls == []
    record = world.ledger.resets.get(CALLER, ACCOUNT)
    assert record is not None
    message = world.ledger.messages.get(record.message_id)
    assert message is not None and message.state is MessageState.SUPPRESSED


ATTACKER = caller_id("arn:aws:sts::123456789012:assumed-role/other-app/task-7")


def test_another_caller_cannot_replace_consume_lock_or_see_a_reset(world: FakeWorld):
    # Given the victim's reset for account 42, mailed
    victim = world.runtime.reset_requests.request(CALLER, ACCOUNT, "victim@example.com")
    poll_due_work(world)
    [token] = tokens_mailed(world)
    before = world.ledger.resets.get(CALLER, ACCOUNT)
    # When another caller asks a reset of its "account 42" for its own address, then consumes
    # the victim's token, then guesses until its own reset locks
    theirs = world.runtime.reset_requests.request(ATTACKER, ACCOUNT, "attacker@example.com")
    assert theirs.reset_id != victim.reset_id
    assert world.runtime.reset_tokens.consume(ATTACKER, ACCOUNT, token) == TokenRefused()
    for _ in range(world.settings.reset_max_failed_attempts):
        assert world.runtime.reset_tokens.consume(ATTACKER, ACCOUNT, "A" * 43) == TokenRefused()
    assert (
        reset_evidence(
            world.runtime.messages, world.runtime.resets, world.runtime.clock.now(), ATTACKER, victim.reset_id
        )
        is None
    )
    # Then the victim's reset is as it was, its own lock is the attacker's, and the token works
    assert world.ledger.resets.get(CALLER, ACCOUNT) == before
    attackers = world.ledger.resets.get(ATTACKER, ACCOUNT)
    assert attackers is not None and (attackers.state, attackers.failed_attempts) == ("invalidated", 5)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, token) == TokenConsumed(victim.reset_id, ACCOUNT)


def test_a_consume_without_a_reset_of_ones_own_counts_nothing_anywhere(world: FakeWorld):
    world.runtime.reset_requests.request(CALLER, ACCOUNT, "victim@example.com")
    poll_due_work(world)
    [token] = tokens_mailed(world)
    before = world.ledger.resets.get(CALLER, ACCOUNT)
    assert world.runtime.reset_tokens.consume(ATTACKER, ACCOUNT, token) == TokenRefused()
    assert world.runtime.reset_tokens.consume(ATTACKER, ACCOUNT, "A" * 43) == TokenRefused()
    assert world.ledger.resets.get(CALLER, ACCOUNT) == before
    assert world.ledger.resets.get(ATTACKER, ACCOUNT) is None


def test_sessions_of_one_role_share_their_resets(world: FakeWorld):
    task_1 = caller_id("arn:aws:sts::123456789012:assumed-role/app-role/task-1")
    task_2 = caller_id("arn:aws:sts::123456789012:assumed-role/app-role/task-2")
    reset = world.runtime.reset_requests.request(task_1, ACCOUNT, ALICE)
    assert world.runtime.reset_requests.request(task_2, ACCOUNT, ALICE) == reset, "the same reset: no second mail"
    poll_due_work(world)
    [token] = tokens_mailed(world)
    assert world.runtime.reset_tokens.consume(task_2, ACCOUNT, token) == TokenConsumed(reset.reset_id, ACCOUNT)
