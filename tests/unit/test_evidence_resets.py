"""Reset evidence and resets whose address changes, as use cases over the in-memory ledger."""

from __future__ import annotations

from sendledger.domain import tokens
from sendledger.domain.messages import HistoryType, MessageState
from sendledger.domain.reset_evidence import Invalidation, ResetState
from sendledger.usecases.evidence import reset_evidence
from sendledger.usecases.results import TokenConsumed, TokenRefused
from tests.support.fakes import ADMIN, CALLER, PRINCIPAL, caller_id
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import poll_due_work, tokens_mailed

ACCOUNT = "acct-1"
OLD, NEW = "old@example.com", "new@example.com"


def request(world: FakeWorld, email: str):
    return world.runtime.reset_requests.request(CALLER, ACCOUNT, email)


def evidence(world: FakeWorld, reset_id: str, principal: str = PRINCIPAL):
    return reset_evidence(
        world.runtime.messages, world.runtime.resets, world.runtime.clock.now(), caller_id(principal), reset_id
    )


def test_a_request_with_another_email_replaces_the_reset_and_mails_the_new_address(world: FakeWorld):
    # Given a reset mailed to a mistyped address
    first = request(world, OLD)
    poll_due_work(world)
    [old_token] = tokens_mailed(world)
    # When the user asks again inside the window with the corrected address
    world.clock.advance(30)
    second = request(world, NEW)
    # Then a new reset, its token the only one valid at once, its mail to the new address
    assert second.reset_id != first.reset_id
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, old_token) == TokenRefused()
    poll_due_work(world)
    assert [call.to for call in world.email.outbox] == [OLD, NEW]
    new_token = tokens_mailed(world)[1]
    record = world.ledger.resets.get(CALLER, ACCOUNT)
    assert record is not None and record.token_hash == tokens.token_hash(new_token)
    assert world.runtime.reset_tokens.consume(CALLER, ACCOUNT, new_token) == TokenConsumed(second.reset_id, ACCOUNT)


def test_the_same_email_again_keeps_the_reset(world: FakeWorld):
    first = request(world, OLD)
    world.clock.advance(30)
    assert request(world, "OLD@example.com") == first  # addresses compare case-folded
    assert evidence(world, first.reset_id).state is ResetState.ACTIVE


def test_the_evidence_says_why_each_token_stopped_being_valid(world: FakeWorld):
    first = request(world, OLD)
    poll_due_work(world)
    world.clock.advance(30)
    second = request(world, NEW)
    poll_due_work(world)
    old = evidence(world, first.reset_id)
    new = evidence(world, second.reset_id)
    assert old is not None and new is not None
    assert old.state is ResetState.REPLACED and old.replaced_by == second.reset_id
    [version] = old.token_versions
    assert version.version == 1 and version.invalidated_because is Invalidation.REPLACED
    assert version.invalidated_at == world.clock.now()
    assert new.state is ResetState.ACTIVE and new.replaces == first.reset_id
    assert [(v.version, v.invalidated_at) for v in new.token_versions] == [(1, None)]
    # The replaced mail's history says why, and the new one's which reset it replaces
    assert any(e.type is HistoryType.RESET_REPLACED for e in old.message.history)
    requested = next(e for e in new.message.history if e.type is HistoryType.RESET_REQUESTED)
    assert requested.evidence["replaces"] == first.reset_id and requested.evidence["because"] == "email changed"
    assert new.message.state is MessageState.ACCEPTED


def test_a_replaced_reset_not_yet_mailed_is_withdrawn(world: FakeWorld):
    first = request(world, OLD)
    second = request(world, NEW)
    poll_due_work(world)
    assert [call.to for call in world.email.outbox] == [NEW]
    old = evidence(world, first.reset_id)
    assert old is not None and old.token_versions == [] and old.message.state is MessageState.CANCELLED
    assert evidence(world, second.reset_id).state is ResetState.ACTIVE


def test_consumed_and_locked_resets_keep_their_end_after_a_later_reset(world: FakeWorld):
    consumed = request(world, OLD)
    poll_due_work(world)
    world.runtime.reset_tokens.consume(CALLER, ACCOUNT, tokens_mailed(world)[0])
    world.clock.advance(5)
    locked = request(world, OLD)
    poll_due_work(world)
    for _ in range(world.settings.reset_max_failed_attempts):
        world.runtime.reset_tokens.consume(CALLER, ACCOUNT, "A" * 43)
    world.clock.advance(5)
    latest = request(world, OLD)
    assert latest.reset_id not in (consumed.reset_id, locked.reset_id)
    assert evidence(world, consumed.reset_id).state is ResetState.CONSUMED
    found = evidence(world, locked.reset_id)
    assert found.state is ResetState.LOCKED
    assert found.token_versions[0].invalidated_because is Invalidation.LOCKED


def test_an_unmailed_expired_reset_is_expired(world: FakeWorld):
    first = request(world, OLD)
    poll_due_work(world)
    world.clock.advance(world.settings.reset_window_seconds + 1)
    found = evidence(world, first.reset_id)
    assert found.state is ResetState.EXPIRED
    assert found.token_versions[0].invalidated_because is Invalidation.EXPIRED


def test_reset_evidence_is_caller_scoped_and_never_holds_a_token(world: FakeWorld):
    first = request(world, OLD)
    poll_due_work(world)
    [token] = tokens_mailed(world)
    assert evidence(world, first.reset_id, principal=ADMIN) is None
    assert evidence(world, "rst_00000000000000000000000000") is None and evidence(world, "nope") is None
    found = evidence(world, first.reset_id)
    assert token not in repr(found) and tokens.token_hash(token) not in repr(found)
