"""The publisher killed or failing mid-batch: nothing lost, and a re-published change keeps its id."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from local.status_out import StreamReader
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.state_changes import StatusEvent
from tests.integration.conftest import ses_record
from tests.reliability.killer import LambdaKilled
from tests.support.status_out import REGION, status_out_harness

PEOPLE = ("bounce@simulator.amazonses.com", "erin@example.com", "frank@example.com")


@dataclass
class FlakyBus:
    """The real bus, failing (or killing the invocation) at its `fail_at`-th put."""

    bus: object
    fail_at: int | None = None
    kill: bool = False
    puts: int = 0
    published: list[StatusEvent] = field(default_factory=list)

    def put(self, events):
        self.puts += 1
        if self.puts == self.fail_at:
            if self.kill:
                raise LambdaKilled("killed between commit and publish")
            raise DependencyUnavailable("PutEvents failed")
        self.bus.put(events)
        self.published += events


@pytest.fixture
def history(api, ingestion, clock, healthy_watermarks):
    """Sends, their SES events and an admin act: every item family the publisher reads."""
    for n, to in enumerate(PEOPLE):
        body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
        view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": f"k-{n}"})[2]
        pmid = view["provider_message_id"]
        clock.advance(1)
        ingestion.publish(ses_record("Send", view["message_id"], to, clock.now(), pmid))
        kind = "Bounce" if to.startswith("bounce") else "Delivery"
        ingestion.publish(ses_record(kind, view["message_id"], to, clock.now(), pmid))
    ingestion.poll()
    assert api("PUT", "/v1/admin/suppressions/frank%40example.com", {"reason": "asked"})[0] == 200


def run(services, *, fail_at=None, kill=False):
    """Publish the whole stream from its start, recovering like Lambda does; what reached the bus."""
    pump, runtime = status_out_harness(services.settings) if not hasattr(run, "cache") else run.cache
    run.cache = (pump, runtime)
    bus = FlakyBus(runtime.bus, fail_at, kill)
    runtime.bus, original = bus, runtime.bus
    pump.stream = StreamReader(pump.resources.stream_arn, REGION, forget_read=False)  # every run reads it all
    try:
        for _ in range(10):  # a failed or killed invocation is retried: the next one resumes
            try:
                pump.publish()
            except LambdaKilled:
                continue  # nothing acknowledged: the whole batch comes back
            if not pump.stream.batch():
                break
    finally:
        runtime.bus = original
    return bus


@pytest.fixture(autouse=True)
def _fresh_harness():
    yield
    if hasattr(run, "cache"):
        del run.cache


def by_id(events):
    return {e.event_id: e for e in events}


@pytest.mark.parametrize("kill", [False, True], ids=["put-fails", "killed"])
def test_a_fault_at_any_put_loses_nothing_and_keeps_every_id(services, history, kill):
    clean = run(services)
    expected = by_id(clean.published)
    assert len(expected) == len(clean.published) >= 10  # states of 3 messages + 2 suppressions
    for fail_at in range(1, clean.puts + 1):
        faulty = run(services, fail_at=fail_at, kill=kill)
        got = by_id(faulty.published)
        # Nothing lost: every change of the clean run reached the bus...
        assert set(got) == set(expected), f"fault at put {fail_at}"
        # ...and a change published twice (the records after the fault) kept its id and content.
        for event in faulty.published:
            assert event.detail == expected[event.event_id].detail, f"fault at put {fail_at}"
        # (a killed invocation's batch is published again whole: duplicates by id, never new ids)
        if kill and fail_at > 1:
            assert len(faulty.published) > len(expected)
