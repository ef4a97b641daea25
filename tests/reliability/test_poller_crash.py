"""A poll cursor is never ahead of what is persisted: the poller killed at every request.

The poll cycle drains the SES events queue (a message is deleted only after its event and
everything derived from it is persisted) and reconciles the SNS SMS delivery-status logs with
FilterLogEvents from a cursor stored in DynamoDB (committed only after the page is applied).

For each source a small world is built once (sends through the API, their provider records in
the queue or in the log groups) and snapshotted: the table, the queue's messages, the log
events, the clock. An unfaulted dry run on that world counts the requests one poll cycle makes
(every AWS request: DynamoDB, SQS, CloudWatch Logs). Then, for every k, the identical world is
restored (empty table refilled, queue and log groups rebuilt, clock set back) and the cycle is
killed at request k, before it is sent or once it was applied and its answer lost
(tests/reliability/killer.py); the next scheduled cycles run until quiescent. Checked through
the API's message and suppression views (plus the whole table's invariants, LedgerWatch):
- right after the kill: nothing applied twice; the stored SMS cursor still covers every record
  not yet applied; no SQS message is gone whose event is not persisted;
- at quiescence: every record applied exactly once (one history entry per source event id, the
  state its outcome), every suppression applied once (version 1).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sqs.models import sqs_backends

from local.constants import SES_EVENTS_DLQ, SES_EVENTS_QUEUE
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from sendledger.providers.sns.lane import LOG_OVERLAP_MS
from sendledger.usecases.poll import CycleReport
from tests.conftest import TABLE
from tests.integration.conftest import FAILURE_GROUP, SUCCESS_GROUP, ses_record
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import FIGURES, Answer, LedgerWatch, scan
from tests.reliability.killer import Kill, LambdaKilled, RequestKiller

LOG_PAGE_SIZE = 2  # FilterLogEvents answers at most this many events per page
RECEIVE_BATCH = 3  # ReceiveMessage answers at most this many messages
PAGE_CAPS = {"FilterLogEvents": ("limit", LOG_PAGE_SIZE), "ReceiveMessage": ("MaxNumberOfMessages", RECEIVE_BATCH)}
MAX_RERUNS = 5
SOAK = os.environ.get("SENDLEDGER_SOAK") == "1"  # every kill point, not the phase boundaries
STAGES = {"before": False, "after": True}  # killed before request k is sent / after it was applied
QUEUES = (SES_EVENTS_QUEUE, SES_EVENTS_DLQ)

# The SMS simulator's fictional numbers (+1NPA55501XX): 00-49 delivered, 50-59 carrier unreachable (transient), 60-69
# invalid (suppress). Three records in the success log group (two pages), two in the failure one.
SMS_NUMBERS = ["+12065550100", "+12065550101", "+12065550102", "+12065550150", "+12065550160"]
SUPPRESSING_SMS = {"Invalid phone number", "Phone number is opted out"}

# SES events per recipient, in publishing order; the same kind twice is SNS delivering the same
# record twice. Six SQS messages: two receive batches (3 + 3), the redelivery in the second.
SES_EVENTS = {
    "crash-a@example.com": ["Send", "Delivery"],
    "crash-b@example.com": ["Bounce", "Bounce"],
    "crash-c@example.com": ["Delivery", "Complaint"],
}
SES_SUPPRESSING = {"Bounce", "Complaint"}


# --- the world ---------------------------------------------------------------------------------
@dataclass
class Snapshot:
    """What one world holds: restored before every kill point."""

    now: datetime
    items: list[dict[str, Any]]
    queue: list[str] = field(default_factory=list)  # SQS bodies, oldest first
    logs: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)  # group → (stream, ms, message)


@dataclass
class Rig:
    world: SharedWorld
    killer: RequestKiller
    clients: dict[str, Any]

    # --- the API's views ---------------------------------------------------------------------
    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Answer:
        answer = self.world.client(method, path, body, **kwargs)
        assert answer.status < 500, answer
        return answer

    def history(self, message_id: str) -> tuple[str, list[dict[str, Any]]]:
        """The message's state and the event entries of its history (GET /v1/messages/{id})."""
        view = self.call("GET", f"/v1/messages/{message_id}").body
        return view["state"], [e for e in view["history"] if e["type"].startswith("event:")]

    def suppression(self, recipient: str) -> dict[str, Any]:
        body: dict[str, Any] = self.call("GET", f"/v1/suppressions/{quote(recipient, safe='')}").body
        return body

    def send(self, channel: str, to: str) -> dict[str, Any]:
        body = {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
        answer = self.call("POST", "/v1/messages", body, headers={"Idempotency-Key": f"crash-{to}"})
        assert answer.status == 202 and answer.body["state"] == "accepted", answer
        view: dict[str, Any] = answer.body
        return view

    # --- building, snapshotting, restoring --------------------------------------------------
    def empty(self) -> None:
        """An empty table and queues, empty log groups, nothing pending at the providers.

        SharedWorld.fresh() with this module's long-lived clients (building a botocore client
        costs more than the rest of a restore), plus the DLQ and the log groups.
        """
        ddb, sqs = self.clients["dynamodb"], self.clients["sqs"]
        keys = [{"pk": item["pk"], "sk": item["sk"]} for item in scan()]
        for start in range(0, len(keys), 25):
            batch = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
            ddb.batch_write_item(RequestItems={TABLE: batch})
        for url in (self.world.ingestion.queue_url, self.world.ingestion.dlq_url):
            while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
                for message in batch:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        self.world.watch = LedgerWatch()
        self.world.simulator.reset()
        logs = self.clients["logs"]
        for group in (SUCCESS_GROUP, FAILURE_GROUP):
            with contextlib.suppress(logs.exceptions.ResourceNotFoundException):
                logs.delete_log_group(logGroupName=group)
            logs.create_log_group(logGroupName=group)

    def snapshot(self) -> Snapshot:
        backend = sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
        bodies = [message.body for message in backend.queues[QUEUES[0]]._messages]
        groups: dict[str, list[tuple[str, int, str]]] = {}
        for group in (SUCCESS_GROUP, FAILURE_GROUP):
            groups[group] = [(e["logStreamName"], e["timestamp"], e["message"]) for e in self.log_events(group)]
        return Snapshot(self.world.clock.now(), scan(), bodies, groups)

    def restore(self, snapshot: Snapshot) -> None:
        self.empty()
        self.world.clock.current = snapshot.now
        ddb, sqs, logs = self.clients["dynamodb"], self.clients["sqs"], self.clients["logs"]
        for start in range(0, len(snapshot.items), 25):
            batch = [{"PutRequest": {"Item": item}} for item in snapshot.items[start : start + 25]]
            ddb.batch_write_item(RequestItems={TABLE: batch})
        for start in range(0, len(snapshot.queue), 10):
            entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(snapshot.queue[start : start + 10])]
            sqs.send_message_batch(QueueUrl=self.world.ingestion.queue_url, Entries=entries)
        for group, events in snapshot.logs.items():
            streams: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for stream, timestamp, message in events:
                streams[stream].append({"timestamp": timestamp, "message": message})
            for stream, log_events in streams.items():
                logs.create_log_stream(logGroupName=group, logStreamName=stream)
                logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=log_events)

    def log_events(self, group: str) -> list[dict[str, Any]]:
        pages = self.clients["logs"].get_paginator("filter_log_events").paginate(logGroupName=group)
        return [event for page in pages for event in page["events"]]

    def queued(self) -> Counter[tuple[str, str]]:
        """(message id, SES event type) of every SQS message not deleted (queue or DLQ, in flight
        or not), read from moto's backend: receiving would count as a receive."""
        backend = sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
        held: Counter[tuple[str, str]] = Counter()
        for name in QUEUES:
            for message in backend.queues[name]._messages:
                record = json.loads(json.loads(message.body)["Message"])
                held[(record["mail"]["tags"][SES_MESSAGE_ID_TAG][0], record["eventType"])] += 1
        return held


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    with shared_world() as world, pytest.MonkeyPatch.context() as patch:
        world.simulator.clock = world.clock.now  # provider records carry the injected time
        world.dynamo.close()  # the fault hooks are not used here: no bookkeeping of every request
        world.ses.close()
        killer = RequestKiller()
        killer.install(patch, PAGE_CAPS)
        clients = {service: boto3.client(service) for service in ("dynamodb", "sqs", "logs", "sns")}
        yield Rig(world, killer, clients)


# --- kill, rerun, check --------------------------------------------------------------------------
@dataclass
class Source:
    """One world of one source and its checks."""

    snapshot: Snapshot
    killed: Callable[[], None]  # right after a kill
    final: Callable[[], None]  # at quiescence
    requests: list[str] = field(default_factory=list)  # the dry run's, in order
    # False when concurrent calls make the order differ run to run: the kill at k still fires,
    # at whichever request comes k-th
    same_order: bool = True


def dry_run(rig: Rig, source: Source) -> None:
    # Given an unfaulted dry run on the world: one cycle applies everything
    rig.restore(source.snapshot)
    assert sorted(map(_canonical, scan())) == sorted(map(_canonical, source.snapshot.items)), "restore not faithful"
    with rig.killer.recording() as requests:
        report = rig.world.poll()
    assert isinstance(report, CycleReport), report
    source.requests = list(requests)
    source.final()


def _canonical(item: dict[str, Any]) -> str:
    return json.dumps(item, sort_keys=True)


def quiesce(rig: Rig) -> None:
    """The next scheduled cycles, one poll interval apart, until one finds nothing to do."""
    for _ in range(MAX_RERUNS):
        rig.world.clock.advance(rig.world.services.settings.poll_interval_seconds)
        report = rig.world.poll()
        rig.world.watch.check()
        assert isinstance(report, CycleReport), f"a rerun failed: {report}"
        # The lanes that move a watermark; a side lane (test outcomes) never reports its source read.
        if all(report.read_to_end.get(lane) for lane in ("ses", "sms")) and report.applied == report.duplicates == 0:
            return
    raise AssertionError(f"not quiescent after {MAX_RERUNS} cycles")


def killed_poll(rig: Rig, index: int, after: bool) -> Kill:
    with rig.killer.killing(index, after) as kill, contextlib.suppress(LambdaKilled):
        rig.world.poll()
    FIGURES["poller_kills"] += int(kill.fired is not None)
    return kill


def kill_points(requests: list[str]) -> list[int]:
    """Every index k of the dry run under SENDLEDGER_SOAK=1; otherwise the first and last request
    of every kind and the two either side of each: the points where a cycle moves from one phase
    to the next (read, apply, advance, delete), which is where a kill leaves a different state."""
    if SOAK:
        return list(range(1, len(requests) + 1))
    points: set[int] = set()
    for kind in set(requests):
        at = [index for index, request in enumerate(requests, start=1) if request == kind]
        points.update({at[0] - 1, at[0], at[0] + 1, at[-1] - 1, at[-1], at[-1] + 1})
    return sorted(point for point in points if 1 <= point <= len(requests))


def kill_at_every_request(rig: Rig, source: Source, stage: str) -> list[str]:
    """One restored world per kill point k of the dry run; what went wrong, per k."""
    failures = []
    for index in kill_points(source.requests):
        request = source.requests[index - 1]
        rig.restore(source.snapshot)
        # When the cycle is killed at request k (before it is sent / after it was applied)
        kill = killed_poll(rig, index, STAGES[stage])
        try:
            if source.same_order:
                assert kill.fired == request, f"the kill hit {kill.fired}, the dry run's request was {request}"
            assert kill.fired is not None, f"the cycle made fewer than {index} requests"
            # Then right after the kill nothing is ahead of what is persisted
            source.killed()
            rig.world.watch.check()
            # And the next cycles apply the rest, each record exactly once
            quiesce(rig)
            source.final()
        except AssertionError as failure:
            failures.append(f"killed {stage} request {index} ({request}): {failure}")
    return failures


# --- SMS: FilterLogEvents from the stored cursor ------------------------------------------------
@dataclass(frozen=True)
class StatusRecord:
    """One SNS delivery-status record as CloudWatch Logs holds it."""

    group: str
    log_event_id: str
    timestamp_ms: int
    provider_message_id: str  # SNS's message id
    destination: str
    status: str
    response: str

    @property
    def event_id(self) -> str:
        """The source event id its message's history names (the deduplication key)."""
        return f"{self.provider_message_id}#{self.status}"


def status_records(rig: Rig) -> list[StatusRecord]:
    records = []
    for group in (SUCCESS_GROUP, FAILURE_GROUP):
        for event in rig.log_events(group):
            record = json.loads(event["message"])
            delivery = record["delivery"]
            records.append(
                StatusRecord(
                    group,
                    event["eventId"],
                    event["timestamp"],
                    record["notification"]["messageId"],
                    delivery["destination"],
                    record["status"],
                    delivery["providerResponse"],
                )
            )
    return records


def sms_source(rig: Rig) -> Source:
    """SMS sends through the API; SNS logs their status records; no subscription delivers them."""
    rig.empty()
    rig.world.healthy_watermarks()
    message_ids = {}  # SNS message id → ours
    for number in SMS_NUMBERS:
        view = rig.send("sms", number)
        rig.world.publish_receipt(view)  # the publisher keeps up: each record finds its receipt
        message_ids[view["provider_message_id"]] = view["message_id"]
        rig.world.clock.advance(1)
    rig.world.clock.advance(5)
    rig.world.simulator.flush()  # into the log groups; no `deliver_sms`: the subscription never runs
    records = status_records(rig)
    # (moto drops log events older than 14 days or more than 2 h ahead of the real time)
    assert sorted(r.destination for r in records) == SMS_NUMBERS, "status records missing from the log groups"
    per_group = Counter(r.group for r in records)
    assert per_group[SUCCESS_GROUP] > LOG_PAGE_SIZE, per_group  # more than one page
    rig.world.clock.advance(30)

    def applied(record: StatusRecord) -> tuple[str, int]:
        state, entries = rig.history(message_ids[record.provider_message_id])
        return state, sum(1 for e in entries if e["event_id"] == record.event_id)

    def killed() -> None:
        unapplied = []
        for record in status_records(rig):
            _, copies = applied(record)
            # Then no record is applied twice
            assert copies <= 1, f"{record.event_id} applied {copies} times"
            if not copies:
                unapplied.append(record)
        # And the stored cursor covers every record not applied: the next cycle reads from its
        # `start` minus the overlap and skips only the event ids it holds as seen
        raw = rig.world.ingestion.services.poller_state.cursor("sms")
        cursor = json.loads(raw) if raw else {}
        for record in unapplied:
            state = cursor.get(record.group)
            if state is None:
                continue  # no cursor yet for this group: the next cycle starts an hour back
            assert record.log_event_id not in state["seen"], (
                f"the cursor holds {record.event_id} as seen, but it was never applied"
            )
            assert record.timestamp_ms >= int(state["start"]) - LOG_OVERLAP_MS, (
                f"the cursor is past {record.event_id}, which was never applied"
            )

    def final() -> None:
        for record in records:
            state, copies = applied(record)
            # Then each status record is in its message's history exactly once
            assert copies == 1, f"{record.event_id}: {copies} history entries, want 1"
            # And the message is in the record's outcome
            assert state == ("delivered" if record.status == "SUCCESS" else "failed"), (record.event_id, state)
            # And a suppressing failure suppressed the number once
            if record.response in SUPPRESSING_SMS:
                suppression = rig.suppression(record.destination)
                assert suppression["suppressed"] is True and suppression["version"] == 1, suppression

    return Source(rig.snapshot(), killed, final)


@pytest.fixture(scope="module")
def sms(rig: Rig) -> Source:
    source = sms_source(rig)
    dry_run(rig, source)
    assert source.requests.count("logs.FilterLogEvents") == 3, source.requests  # two pages, one page
    return source


@pytest.mark.parametrize("stage", list(STAGES))
def test_sms_log_reconciliation_survives_a_kill_at_every_request(rig: Rig, sms: Source, stage: str) -> None:
    # Given five SMS status records over three FilterLogEvents pages (two log groups), reachable
    # only through the poller's reconciliation; When a cycle dies at request k, for every k of the
    # dry run, and the next cycles run; Then every record is applied exactly once, the cursor never ahead
    failures = kill_at_every_request(rig, sms, stage)
    FIGURES["poller_kill_points"] += len(kill_points(sms.requests))
    assert not failures, "\n".join(failures)


# --- SES: the events queue -----------------------------------------------------------------------
def ses_source(rig: Rig) -> Source:
    """Email sends through the API; SES publishes their events (some twice) through SNS to SQS."""
    rig.empty()
    rig.world.healthy_watermarks()
    views = {to: rig.send("email", to) for to in SES_EVENTS}
    published: Counter[tuple[str, str]] = Counter()  # (message id, event type) → SQS messages
    for to, kinds in SES_EVENTS.items():
        view = views[to]
        record: dict[str, Any] = {}
        for kind in kinds:
            if record.get("eventType") != kind:  # else the same record again: a redelivery
                rig.world.clock.advance(1)
                record = ses_record(kind, view["message_id"], to, rig.world.clock.now(), view["provider_message_id"])
            rig.clients["sns"].publish(TopicArn=rig.world.ingestion.topic_arn, Message=json.dumps(record))
            published[(view["message_id"], kind)] += 1
    assert rig.world.ingestion.queue_depth() == sum(published.values()) == 6
    rig.world.clock.advance(5)

    def killed() -> None:
        held = rig.queued()
        for view in views.values():
            _, entries = rig.history(view["message_id"])
            # Then no event is applied twice
            per_id = Counter(e["event_id"] for e in entries)
            assert set(per_id.values()) <= {1}, f"an event applied twice: {per_id}"
            # And no SQS message is gone whose event is not persisted
            applied = {e["type"].removeprefix("event:") for e in entries}
            for (message_id, kind), copies in published.items():
                if message_id == view["message_id"] and held[(message_id, kind)] < copies:
                    assert kind in applied, f"{kind} of {message_id} deleted from the queue but never applied"

    def final() -> None:
        assert not rig.queued(), "messages left in the queue (or moved to its DLQ)"
        for to, kinds in SES_EVENTS.items():
            state, entries = rig.history(views[to]["message_id"])
            # Then one history entry per event id, redeliveries included
            assert sorted(e["type"] for e in entries) == sorted(f"event:{k}" for k in set(kinds)), entries
            assert len({e["event_id"] for e in entries}) == len(entries), entries
            # And the message is in its outcome's state (a complaint wins over the delivery)
            outcome = {"Delivery": "delivered", "Bounce": "bounced", "Complaint": "complained"}[kinds[-1]]
            assert state == outcome, (to, state)
            # And a bounce or complaint suppressed the address once: version bumped once
            if SES_SUPPRESSING & set(kinds):
                suppression = rig.suppression(to)
                assert suppression["suppressed"] is True and suppression["version"] == 1, (to, suppression)

    return Source(rig.snapshot(), killed, final)


# One apply thread: the drain's requests come in the same order every run. Eight: the pipelined
# drain's receives, applies and deletes overlap; its receive while the first batch is applied gets
# that batch again (this queue's visibility timeout is 0), after which it receives between batches.
DRAIN_RECEIVES = {1: 3, 8: 4}  # two batches, (that re-receive,) then empty
SIDE_LANE_RECEIVES = 1  # the test-outcomes lane's one receive of its empty queue, every cycle


@pytest.fixture(scope="module", params=sorted(DRAIN_RECEIVES), ids=lambda n: f"{n}-apply-threads")
def ses(rig: Rig, request: pytest.FixtureRequest) -> Iterator[Source]:
    threads = int(request.param)
    with pytest.MonkeyPatch.context() as patch:
        settings = rig.world.services.settings.replace({"poll_apply_concurrency": threads})
        patch.setattr(rig.world.services, "settings", settings)
        source = ses_source(rig)
        source.same_order = threads == 1
        dry_run(rig, source)
        receives = DRAIN_RECEIVES[threads] + SIDE_LANE_RECEIVES
        assert source.requests.count("sqs.ReceiveMessage") == receives, source.requests
        yield source


@pytest.mark.parametrize("stage", list(STAGES))
def test_ses_queue_drain_survives_a_kill_at_every_request(rig: Rig, ses: Source, stage: str) -> None:
    # Given six SES event messages (two receive batches, one a redelivery); When a cycle
    # dies at request k, for every k of the dry run, and the next cycles run; Then every event is
    # applied exactly once and no message left the queue before its event was persisted
    failures = kill_at_every_request(rig, ses, stage)
    FIGURES["poller_kill_points"] += len(kill_points(ses.requests))
    assert not failures, "\n".join(failures)
