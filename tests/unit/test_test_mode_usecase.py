"""Test mode as a use case over the fakes: a test caller's sends reach no real sender, get the
simulator's outcomes through the same ingestion, say `test`, and keep their suppressions apart."""

from __future__ import annotations

from sendledger.domain import test_mode
from sendledger.domain.caller_settings import CallerSettings
from sendledger.domain.recipients import Channel
from sendledger.usecases.results import Accepted
from sendledger.usecases.views import message_view
from tests.support.fakes import caller_id
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import command, seconds_left, send

TESTER = "arn:aws:iam::123456789012:user/tester"
BOUNCE = "bounce@simulator.amazonses.com"
INVALID_NUMBER = "+12065550165"  # 60-69: "Invalid phone number", which suppresses


def mark_test(world: FakeWorld, principal: str = TESTER) -> None:
    world.runtime.caller_settings.put(CallerSettings(caller_id(principal), test_mode=True))


def send_as_tester(world: FakeWorld, key: str, to: str, channel: Channel = Channel.EMAIL) -> Accepted:
    result = send(world.runtime, key, to=to, channel=channel, principal=TESTER)
    assert isinstance(result, Accepted)
    return result


def poll(world: FakeWorld) -> None:
    world.clock.advance(5)
    world.runtime.poll_cycle.run(seconds_left)


def view_of(world: FakeWorld, message_id: str) -> dict:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message_view(message, world.settings, with_history=True)


def test_a_test_callers_bounce_reaches_no_real_sender_and_suppresses_only_its_own_recipient(world: FakeWorld):
    mark_test(world)
    sent = send_as_tester(world, "t-1", BOUNCE)
    assert world.email.calls == [] and world.sms.calls == []  # no provider was called
    assert sent.view["test"] is True and sent.view["state"] == "accepted" and sent.view["provider"] == "ses"
    assert sent.message.provider_message_id is not None
    assert test_mode.caller_of(sent.message.provider_message_id) == caller_id(TESTER)
    poll(world)  # the SES records went onto the SES events queue: the same lane drains them
    view = view_of(world, sent.message.message_id)
    assert view["state"] == "bounced" and view["test"] is True
    assert [entry["type"] for entry in view["history"]][-1] == "event:Bounce"
    assert all(entry["test"] is True for entry in view["history"])
    # Suppressed in the test caller's namespace, never the real recipient
    own = world.ledger.recipients.get(test_mode.recipient_key(caller_id(TESTER), f"email:{BOUNCE}"))
    assert own.suppression.suppressed
    assert not world.ledger.recipients.get(f"email:{BOUNCE}").suppression.suppressed
    # A real caller's send to that address goes to its real provider, eligible
    real = send(world.runtime, "r-1", to=BOUNCE)
    assert isinstance(real, Accepted) and real.view["state"] == "accepted" and "test" not in real.view
    assert [call.to for call in world.email.calls] == [BOUNCE]
    # The test caller's next send to it is suppressed, as a real bounce would have it
    assert send_as_tester(world, "t-2", BOUNCE).view["state"] == "suppressed"


def test_a_real_suppression_does_not_decide_a_test_outcome(world: FakeWorld):
    real_key = f"email:{BOUNCE}"
    world.ledger.recipients.change(real_key, True, "confirmed", "admin", expected_version=0, now=world.clock.now())
    mark_test(world)
    sent = send_as_tester(world, "t-1", BOUNCE)
    assert sent.view["state"] == "accepted"  # simulated, not suppressed by the real item
    assert send(world.runtime, "r-1", to=BOUNCE).view["state"] == "suppressed"


def test_a_test_callers_sms_failure_is_simulated_and_kept_apart(world: FakeWorld):
    mark_test(world)
    sent = send_as_tester(world, "t-sms", INVALID_NUMBER, Channel.SMS)
    assert world.sms.calls == [] and sent.view["provider"] == "sns"
    poll(world)  # the status record went into the failure log group: the log lane reads it
    view = view_of(world, sent.message.message_id)
    assert view["state"] == "failed" and all(entry["test"] is True for entry in view["history"])
    own = test_mode.recipient_key(caller_id(TESTER), f"sms:{INVALID_NUMBER}")
    assert world.ledger.recipients.get(own).suppression.suppressed
    assert not world.ledger.recipients.get(f"sms:{INVALID_NUMBER}").suppression.suppressed


def test_timeout_lost_is_resent_after_proven_absence_still_simulated(world: FakeWorld):
    mark_test(world)
    sent = send_as_tester(world, "t-lost", "alice+timeout-lost@example.com")
    assert sent.view["state"] == "unknown"
    for _ in range(30):  # the SES watermark passes the send plus the grace; then it is resent
        world.clock.advance(world.settings.unknown_grace_seconds / 10)
        world.runtime.poll_cycle.run(seconds_left)
    view = view_of(world, sent.message.message_id)
    assert view["state"] == "delivered" and world.email.calls == []
    assert [entry["type"] for entry in view["history"]].count("resend") == 1


def test_throttled_twice_then_accepted(world: FakeWorld):
    mark_test(world)
    sent = send_as_tester(world, "t-throttle", "alice+throttle@example.com")
    assert sent.view["state"] == "accepted"
    outcome = next(e for e in view_of(world, sent.message.message_id)["history"] if e["type"] == "provider_outcome")
    assert outcome["attempts"] == 3 and world.email.calls == []


def test_a_real_caller_reads_its_settings_once_per_cache_period_and_its_items_say_nothing_of_test(world: FakeWorld):
    store = world.ledger.caller_settings
    before = store.reads
    for number in range(5):
        assert isinstance(send(world.runtime, f"k-{number}", to=f"r{number}@example.com"), Accepted)
    assert store.reads - before == 1  # cached: no read per send
    message = world.ledger.messages.get(send(world.runtime, "k-0", to="r0@example.com").view["message_id"])
    assert message is not None and not message.test and message.recipient_key == "email:r0@example.com"


def test_an_escalation_fallback_of_a_test_message_stays_simulated(world: FakeWorld):
    mark_test(world)
    escalation = {"deadline_seconds": 60, "fallback": [{"channel": "sms", "to": "+12065550100"}]}
    result = world.runtime.sender.send(
        command("t-esc", to=BOUNCE, principal=TESTER, escalation=escalation), seconds_left
    )
    assert isinstance(result, Accepted) and result.view["test"] is True
    poll(world)  # bounced: failed for good before the deadline, the fallback goes now
    poll(world)
    found = [world.ledger.messages.get(message_id) for message_id in list(world.ledger.db.messages)]
    fallbacks = [m for m in found if m is not None and m.channel is Channel.SMS]
    assert fallbacks and all(m.test for m in fallbacks) and world.sms.calls == []
