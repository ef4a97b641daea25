"""One poll cycle over the whole fake pipeline: SES queue, SMS logs, due work, escalations."""

from __future__ import annotations

import json
from datetime import datetime

from sendledger import names
from sendledger.bootstrap import Runtime
from sendledger.domain.clock import iso
from sendledger.domain.messages import MessageState
from sendledger.domain.recipients import Channel
from sendledger.ports.reports import CycleReport
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from tests.unit.fakes import TIMEOUT_LOST, FakeWorld
from tests.unit.fakes.world import SUCCESS_GROUP
from tests.unit.helpers import ALICE, PHONE, command, seconds_left, send


def ses_body(event_type: str, message_id: str, at: datetime, recipient: str = ALICE) -> dict[str, object]:
    """An SQS body from the SES events queue: the SNS envelope around an SES event record."""
    detail = {"timestamp": iso(at), "recipients": [recipient]} if event_type == "Delivery" else {"timestamp": iso(at)}
    record = {
        "eventType": event_type,
        "mail": {
            "messageId": "ses-0001",
            "timestamp": iso(at),
            "destination": [recipient],
            "tags": {SES_MESSAGE_ID_TAG: [message_id]},
        },
        event_type[0].lower() + event_type[1:]: detail,
    }
    return {"Type": "Notification", "Message": json.dumps(record)}


def sms_log(provider_message_id: str, at: datetime) -> str:
    return json.dumps(
        {
            "notification": {"messageId": provider_message_id, "timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]},
            "delivery": {"destination": PHONE, "providerResponse": "Message has been accepted by phone"},
            "status": "SUCCESS",
        }
    )


def state_of(world: FakeWorld, message_id: str) -> MessageState:
    message = world.ledger.messages.get(message_id)
    assert message is not None
    return message.state


def test_a_cycle_drains_the_queue_and_sets_the_watermark_to_its_start(world: FakeWorld):
    message_id = send(world.runtime).view["message_id"]
    world.ses_queue.put(ses_body("Delivery", message_id, world.clock.now()))
    world.clock.advance(30)
    report = world.runtime.poll_cycle.run(seconds_left)
    assert (report.applied, report.read_to_end["ses"]) == (1, True)
    assert state_of(world, message_id) is MessageState.DELIVERED
    assert world.ses_queue.depth() == 0
    assert world.ledger.poller_state.watermark("ses") == report.started_at


def test_a_poison_message_stays_for_the_dlq_and_holds_the_watermark(world: FakeWorld):
    world.ses_queue.put("not json")
    report = world.runtime.poll_cycle.run(seconds_left)
    assert (report.poison, report.read_to_end["ses"]) == (1, False)
    assert world.ses_queue.depth() == 1 and world.ses_queue.deleted == []
    assert world.ledger.poller_state.watermark("ses") is None


def test_sms_logs_are_read_to_the_end_once(world: FakeWorld):
    result = world.runtime.sender.send(command(channel=Channel.SMS, to=PHONE), seconds_left)
    world.logs.write(SUCCESS_GROUP, sms_log("sns-0001", world.clock.now()), int(world.clock.now().timestamp() * 1000))
    world.clock.advance(30)
    first = world.runtime.poll_cycle.run(seconds_left)
    assert (first.applied, first.read_to_end["sms"]) == (1, True)
    assert state_of(world, result.view["message_id"]) is MessageState.DELIVERED
    assert world.ledger.poller_state.cursor("sms") is not None
    world.clock.advance(30)
    again = world.runtime.poll_cycle.run(seconds_left)
    assert (again.applied, again.duplicates) == (0, 0), "the cursor remembers what it applied"


def test_an_undelivered_message_escalates_to_its_fallback_at_the_deadline(world: FakeWorld):
    escalation = {"deadline_seconds": 300, "fallback": [{"channel": "sms", "to": PHONE}]}
    message_id = send(world.runtime, escalation=escalation).view["message_id"]
    world.clock.advance(301)
    report = world.runtime.poll_cycle.run(seconds_left)
    assert report.escalated == 1
    assert state_of(world, message_id) is MessageState.ESCALATED
    [(body, deduplication_id)] = world.escalations.sent
    assert body["message"]["message_id"] == message_id and deduplication_id == f"{message_id}-escalation"
    assert [call.to for call in world.sms.calls] == [PHONE]
    world.clock.advance(60)
    assert world.runtime.poll_cycle.run(seconds_left).escalated == 0, "once"
    assert len(world.sms.calls) == 1


def test_each_event_message_and_log_record_is_read_once_per_cycle(world: FakeWorld, monkeypatch):
    """Its lane (who it is about) and its apply share one parse: parsing is most of a cycle's own CPU."""
    from sendledger.providers.sns import lane as sms_lane
    from sendledger.usecases.queued_events import QueueLane

    reads = {"ses": 0, "sms": 0}
    [queue_lane] = [lane for lane in world.runtime.lanes if isinstance(lane, QueueLane)]
    parse_body, parse_record = queue_lane.parse, sms_lane.parse_sms_record

    def counted_body(body):
        reads["ses"] += 1
        return parse_body(body)

    def counted_record(message):
        reads["sms"] += 1
        return parse_record(message)

    monkeypatch.setattr(queue_lane, "parse", counted_body)  # the lane's one parser of bodies
    monkeypatch.setattr(sms_lane, "parse_sms_record", counted_record)
    emails = [send(world.runtime, key=f"k-{i}", to=f"r{i}@example.com").view["message_id"] for i in range(3)]
    for i, message_id in enumerate(emails):
        world.ses_queue.put(ses_body("Delivery", message_id, world.clock.now(), recipient=f"r{i}@example.com"))
    world.runtime.sender.send(command(channel=Channel.SMS, to=PHONE), seconds_left)
    world.logs.write(SUCCESS_GROUP, sms_log("sns-0001", world.clock.now()), int(world.clock.now().timestamp() * 1000))
    world.ses_queue.put("not json")
    world.clock.advance(30)
    report = world.runtime.poll_cycle.run(seconds_left)
    assert (report.applied, report.poison) == (4, 1)
    assert reads == {"ses": 4, "sms": 1}


def test_the_send_path_is_built_by_the_first_cycle_with_work_for_it(world: FakeWorld, monkeypatch):
    # A cold poller whose cycle finds nothing due never loads nor builds the resolver, the resender
    # or the fallback sender (the cold-start bar); the cycle that has an unknown to resolve builds them once.
    built: list[str] = []
    for flow in ("_unknown", "_message_sender"):
        original = getattr(Runtime, flow)
        monkeypatch.setattr(
            Runtime, flow, lambda self, *args, _o=original, _n=flow: built.append(_n) or _o(self, *args)
        )
    world.email.then(TIMEOUT_LOST)
    message_id = send(world.runtime).view["message_id"]
    built.clear()  # the api's sender is not the poller's concern
    world.runtime.poll_cycle.run(seconds_left)
    assert built == []
    world.clock.advance(world.settings.unknown_grace_seconds + 60)
    report = world.runtime.poll_cycle.run(seconds_left)
    assert built == ["_unknown"] and report.resolved == {"absence_proven": 1, "resent_accepted": 1}
    assert state_of(world, message_id) is MessageState.ACCEPTED


def test_the_metrics_step_reads_only_the_watermarks_the_cycle_did_not_move(world: FakeWorld, monkeypatch):
    world.clock.advance(30)
    world.runtime.poll_cycle.run(seconds_left)  # both sources' watermarks at this cycle's start
    read: list[str] = []
    stored = world.ledger.poller_state.watermark
    monkeypatch.setattr(world.ledger.poller_state, "watermark", lambda source: read.append(source) or stored(source))
    world.clock.advance(60)
    moved = world.runtime.poll_cycle.run(seconds_left)
    assert read == [] and ages(moved) == {"ses": 0.0, "sms": 0.0, None: 0.0}
    # A poison message holds SES's watermark: its age is the stored one's, read
    world.ses_queue.put("not json")
    world.clock.advance(60)
    held = world.runtime.poll_cycle.run(seconds_left)
    assert read == ["ses"] and ages(held) == {"ses": 60.0, "sms": 0.0, None: 60.0}


def ages(report: CycleReport) -> dict[str | None, float]:
    return {m.dimensions.get("source"): m.value for m in report.metrics if m.name == names.METRIC_WATERMARK_AGE_SECONDS}


def test_a_cycle_with_nothing_due_asks_one_question_of_the_due_work(world: FakeWorld, monkeypatch):
    asked: list[str] = []
    due_work = world.ledger.due_work
    for method in ("items", "count", "nothing_due"):
        original = getattr(due_work, method)
        monkeypatch.setattr(due_work, method, lambda *a, _o=original, _m=method: asked.append(_m) or _o(*a))
    # An accepted send leaves nothing due and nothing unknown: one read, no pass, no count
    send(world.runtime, key="accepted")
    quiet = world.runtime.poll_cycle.run(seconds_left)
    assert asked == ["nothing_due"] and backlog(quiet) == [0.0]
    # An unknown send, not due before its grace: every pass asks for its kind, the backlog is counted
    world.email.then(TIMEOUT_LOST)
    message_id = send(world.runtime, key="lost").view["message_id"]
    asked.clear()
    waiting = world.runtime.poll_cycle.run(seconds_left)
    assert asked == ["nothing_due", *["items"] * 5, "count"] and backlog(waiting) == [1.0]
    assert waiting.resolved == {} and state_of(world, message_id) is MessageState.UNKNOWN


def backlog(report: CycleReport) -> list[float]:
    return [m.value for m in report.metrics if m.name == names.METRIC_UNKNOWN_BACKLOG]
