"""The outcome write is conditional: it never moves a message out of a state it may not leave.

Delivery events no longer write the message item (they land on its receipt), so the race the
condition guards is the send path against the poller: a provider answer that arrives after the
poller has already settled the message (escalated it at its deadline, say) must not reopen it.
"""

from __future__ import annotations

from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.ports.messages import Outcome

ALERT = {
    "channel": "email",
    "to": "late@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "s"},
}


def test_a_late_outcome_does_not_reopen_a_settled_message(api, services, clock, healthy_watermarks):
    # Given a message the poller has settled (escalated) while its send's answer was still out
    status, _, sent = api("POST", "/v1/messages", ALERT, headers={"Idempotency-Key": "late-1"})
    assert status == 202 and sent["state"] == "accepted"
    clock.advance(600)
    settled = HistoryEntry(at=clock.now(), type=HistoryType.ESCALATED, state=MessageState.ESCALATED)
    services.messages.transition(
        sent["message_id"], frozenset({MessageState.ACCEPTED}), MessageState.ESCALATED, [settled], None
    )
    message = services.messages.get(sent["message_id"])
    assert message is not None and message.state is MessageState.ESCALATED
    # When the late provider answer is recorded
    clock.advance(1)
    response = ProviderResponse(CallResult.ACCEPTED, provider_message_id="late-provider-id", request_id="r-1")
    entry = HistoryEntry(
        at=clock.now(), type=HistoryType.PROVIDER_OUTCOME, state=MessageState.ACCEPTED, evidence=response.evidence()
    )
    services.messages.record_outcome(
        Outcome(message=message, new_state=MessageState.ACCEPTED, entry=entry, response=response)
    )
    # Then the message stays escalated, and the answer is still on record as evidence
    after = services.messages.get(sent["message_id"])
    assert after is not None and after.state is MessageState.ESCALATED
    assert [e.type for e in after.history][-1] is HistoryType.PROVIDER_OUTCOME
