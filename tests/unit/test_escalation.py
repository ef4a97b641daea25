"""The escalation as one value: built from the request, stored, and walked step by step."""

from __future__ import annotations

from sendledger.api.models import SendMessageRequest
from sendledger.api.send_body import SendRequest, parse_send_body
from sendledger.domain.escalation import Escalation, Fallback
from sendledger.domain.recipients import Channel

REQUEST = {
    "channel": "email",
    "to": "a@example.com",
    "template": {"id": "alert", "version": "1"},
    "escalation": {
        "deadline_seconds": 300,
        "fallback": [{"channel": "sms", "to": "+12065550100"}, {"channel": "email", "to": "oncall@example.com"}],
    },
}


def test_the_request_becomes_the_value_and_its_stored_form_is_the_requests():
    """A keyed send's fingerprint is computed over the stored form: it must be what the request
    model dumped before, or a replay of a key taken before would be refused as another payload."""
    body = SendMessageRequest.model_validate(REQUEST)
    checked = parse_send_body(REQUEST)  # what the send route builds the value from
    assert body.escalation is not None and isinstance(checked, SendRequest) and checked.escalation is not None
    escalation = checked.escalation.to_domain(default_deadline=900)  # the request names its own: 300
    assert escalation == Escalation(
        300, (Fallback(Channel.SMS, "+12065550100"), Fallback(Channel.EMAIL, "oncall@example.com"))
    )
    assert escalation.as_json() == body.escalation.model_dump()
    assert Escalation.from_json(escalation.as_json()) == escalation


def test_each_step_sends_the_next_fallback_and_carries_the_rest_on():
    escalation = Escalation.from_json(REQUEST["escalation"])
    first = escalation.next_step()
    assert first is not None
    fallback, carried_on = first
    assert fallback == Fallback(Channel.SMS, "+12065550100")
    assert carried_on == Escalation(300, (Fallback(Channel.EMAIL, "oncall@example.com"),), step=1)
    assert carried_on.as_json()["step"] == 1  # stored on the fallback message, as before
    last = carried_on.next_step()
    assert last == (Fallback(Channel.EMAIL, "oncall@example.com"), None)
    assert Escalation(300, ()).next_step() is None
