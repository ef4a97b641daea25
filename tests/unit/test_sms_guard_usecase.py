"""The SMS guardrails beyond the api's own sends: an escalation's fallback and a resend obey the
owner's country rule as it is when they are sent, and say so in the history."""

from __future__ import annotations

from dataclasses import replace

from sendledger.domain.messages import HistoryType, MessageState
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_guardrails import CountryRule, RuleMode
from sendledger.usecases.poll import poll_cycle
from tests.support.fakes import CALLER
from tests.unit.fakes import THROTTLED, FakeWorld
from tests.unit.helpers import PHONE, poll_due_work, seconds_left, send

GB_ONLY = CountryRule(RuleMode.ALLOW, frozenset({"GB"}))


def only_gb(world: FakeWorld) -> None:
    store = world.services.caller_settings
    store.put(replace(store.get(CALLER), sms_countries=GB_ONLY))


def test_a_fallback_to_a_refused_country_is_not_sent_and_the_escalation_records_why(world: FakeWorld) -> None:
    escalation = {"deadline_seconds": 300, "fallback": [{"channel": "sms", "to": PHONE}]}
    message_id = send(world.services, escalation=escalation).view["message_id"]
    only_gb(world)  # set after the send, before its escalation: the rule as it is now holds
    world.clock.advance(301)
    report = poll_cycle(world.pipeline, seconds_left)
    assert report.escalated == 1 and world.sms.calls == []
    message = world.ledger.messages.get(message_id)
    assert message is not None and message.state is MessageState.ESCALATED
    (escalated,) = [entry for entry in message.history if entry.type is HistoryType.ESCALATED]
    assert escalated.evidence["fallback_refused"] == {
        "reason": "country-not-allowed",
        "country": "US",
        "rule": {"allow": ["GB"]},
        "rule_source": "caller",
    }
    assert "fallback_message_id" not in escalated.evidence
    assert report.resolved["sms_refused_country-not-allowed"] == 1
    refused = [point for point in report.metrics if point.name == "SmsRefused"]
    assert {(point.value, point.dimensions.get("reason")) for point in refused} == {
        (1, "country-not-allowed"),
        (1, None),
    }


def test_a_pending_sms_whose_country_is_refused_since_is_cancelled_not_resent(world: FakeWorld) -> None:
    world.sms.then(THROTTLED, THROTTLED, THROTTLED, THROTTLED)
    view = send(world.services, channel=Channel.SMS, to=PHONE).view
    assert view["state"] == "pending"
    calls = len(world.sms.calls)
    only_gb(world)
    world.clock.advance(3600)
    assert poll_due_work(world)["sms_refused_country-not-allowed"] == 1
    assert len(world.sms.calls) == calls  # not one more call
    message = world.ledger.messages.get(view["message_id"])
    assert message is not None and message.state is MessageState.CANCELLED
    assert message.history[-1].evidence["sms_refused"]["country"] == "US"
