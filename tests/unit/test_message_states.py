"""Properties of the message lifecycle (every pair of states: tests/reliability/test_oracles.py)."""

import itertools

import pytest

from sendledger.domain.messages import TERMINAL, MessageState, can_transition, predecessors

S = MessageState


def test_outcomes_never_regress():
    # A late "delivered" does not undo a bounce or a complaint, whatever the order of arrival.
    for later, earlier in [(S.DELIVERED, S.BOUNCED), (S.DELIVERED, S.COMPLAINED), (S.ACCEPTED, S.DELIVERED)]:
        assert not can_transition(earlier, later)
    assert can_transition(S.DELIVERED, S.COMPLAINED)
    assert can_transition(S.BOUNCED, S.COMPLAINED)


def test_out_of_order_events_converge_to_the_strongest_outcome():
    outcomes = [S.DELIVERED, S.BOUNCED, S.COMPLAINED]
    finals = set()
    for order in itertools.permutations(outcomes):
        state = S.ACCEPTED
        for event in order:
            if can_transition(state, event):
                state = event
        finals.add(state)
    assert finals == {S.COMPLAINED}


def test_suppressed_and_rejected_are_terminal_except_for_escalation():
    for terminal in (S.SUPPRESSED, S.REJECTED):
        assert terminal in TERMINAL
        allowed = {target for target in S if can_transition(terminal, target)}
        assert allowed <= {S.ESCALATED}


def test_unresolved_still_accepts_late_provider_evidence_but_is_never_resent():
    allowed = {target for target in S if can_transition(S.UNRESOLVED, target)}
    assert allowed == {S.DELIVERED, S.BOUNCED, S.COMPLAINED, S.FAILED, S.ESCALATED}


def test_escalation_from_anything_but_delivered():
    assert predecessors(S.ESCALATED) == frozenset(S) - {S.DELIVERED, S.ESCALATED}


def test_no_state_returns_to_received():
    assert predecessors(S.RECEIVED) == frozenset()


def test_cancelled_only_before_any_accepted_send():
    assert predecessors(S.CANCELLED) == frozenset({S.RECEIVED, S.PENDING, S.RETRY})
    assert S.CANCELLED in TERMINAL
    assert {target for target in S if can_transition(S.CANCELLED, target)} == {S.ESCALATED}


def _apply(state, target):
    """One delivery event applied to one item, under the store's conditional-update rule."""
    from sendledger.domain.outcomes import allowed_from

    return target if state in allowed_from(target) else state


SMS_OUTCOMES = [S.DELIVERED, S.FAILED]


@pytest.mark.parametrize("row_state", list(MessageState))
@pytest.mark.parametrize("length", [1, 2, 3])
def test_a_receipt_read_with_its_message_equals_one_item_taking_every_event(row_state, length):
    # Given a message row in any state, and SMS status records landing on the send's receipt
    from datetime import UTC, datetime

    from sendledger.domain.messages import Message, Template
    from sendledger.domain.outcomes import apply_receipt
    from sendledger.domain.recipients import Channel

    for records in itertools.product(SMS_OUTCOMES, repeat=length):
        receipt = S.ACCEPTED
        for target in records:
            receipt = _apply(receipt, target)
        at = datetime(2026, 11, 29, tzinfo=UTC)
        message = Message(
            "msg_1", Channel.SMS, "+12065550120", Template("alert", "1"), row_state, "alert", at, at, "k", "sns"
        )
        # When the two are read together
        apply_receipt(message, receipt, "SmsFailure: x" if receipt is S.FAILED else None)
        # Then the state is what the row would hold had every record been applied to it
        single = row_state
        for target in records:
            single = _apply(single, target)
        assert message.state is single, (row_state, records)


def test_an_accepted_message_is_never_sent_again():
    # Accepted is a proof of acceptance: no path leads back to a send (at most once)
    assert not can_transition(S.ACCEPTED, S.SENDING)
    assert S.ACCEPTED not in predecessors(S.SENDING)
    for later in (S.DELIVERED, S.BOUNCED, S.COMPLAINED):
        assert not can_transition(later, S.SENDING)
