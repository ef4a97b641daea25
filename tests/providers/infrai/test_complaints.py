"""Infrai pushes nothing: a delivered message is read again, on a backoff schedule up to the
complaint horizon, so that a complaint after the delivery suppresses (issue 39). The schedule's
arithmetic, the reads the lane makes for one message, and where its due markers land."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import boto3
import pytest

from sendledger import names
from sendledger.domain.messages import DueKind
from sendledger.domain.provider import Provider
from sendledger.providers.infrai.complaints import ComplaintSchedule
from sendledger.providers.infrai.settings import InfraiSettings
from sendledger.usecases.context import Services
from tests.conftest import TABLE
from tests.providers.conftest import built_world
from tests.providers.test_contract import COMPLAINT, SUCCESS, send, suppressed, view
from tests.providers.worlds import InfraiWorld, infrai_world, poll
from tests.support.fakes import FakeClock

DELIVERED = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)


def test_the_default_schedule_doubles_from_a_minute_to_six_hours_and_ends_at_three_days() -> None:
    offsets = InfraiSettings().complaint_schedule().read_offsets()
    assert offsets[:9] == [60 * 2**step for step in range(9)]  # 1 min … 4 h 16 min
    gaps = [later - earlier for earlier, later in pairwise(offsets)]
    assert max(gaps) == 21_600 and offsets[-1] == 259_200
    assert len(offsets) == 21  # the reads per delivered message (benchmarks/README.md prices them)


def test_a_read_waits_as_long_as_the_message_was_delivered_within_the_first_step_and_the_cap() -> None:
    schedule = ComplaintSchedule(first_read_seconds=60, max_interval_seconds=600, horizon_seconds=3600)
    assert schedule.next_read(DELIVERED, DELIVERED) == DELIVERED + timedelta(seconds=60)
    assert schedule.next_read(DELIVERED, DELIVERED + timedelta(seconds=200)) == DELIVERED + timedelta(seconds=400)
    assert schedule.next_read(DELIVERED, DELIVERED + timedelta(seconds=2000)) == DELIVERED + timedelta(seconds=2600)
    assert schedule.next_read(DELIVERED, DELIVERED + timedelta(seconds=3500)) == DELIVERED + timedelta(seconds=3600)
    assert schedule.next_read(DELIVERED, DELIVERED + timedelta(seconds=3600)) is None
    assert ComplaintSchedule(60, 600, 0).read_offsets() == [], "a horizon of 0 reads nothing again"


@pytest.fixture
def infrai(services: Services, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[InfraiWorld]:
    with built_world(infrai_world, Provider.INFRAI, services, clock, monkeypatch) as world:
        assert isinstance(world, InfraiWorld)
        services.settings = services.settings.configure_provider(
            InfraiSettings, complaint_first_read_seconds=2, complaint_max_read_interval_seconds=8,
            complaint_horizon_seconds=30,
        )  # fmt: skip
        yield world


def due(world: InfraiWorld, kind: DueKind) -> int:
    return world.parts.ingestion.pipeline.due_work.count(kind)


def gets(world: InfraiWorld) -> int:
    return sum(1 for method, _ in world.http.requests if method == "GET")


def test_a_delivered_message_is_read_on_the_schedule_and_no_longer_after_the_horizon(infrai: InfraiWorld) -> None:
    clock = infrai.parts.clock
    sent = send(infrai, SUCCESS)
    clock.advance(2)
    poll(infrai)
    assert view(infrai, sent["message_id"])["state"] == "delivered"
    assert due(infrai, DueKind.STATUS) == 0 and due(infrai, DueKind.COMPLAINT) == 1
    asked = gets(infrai)
    for _ in range(40):  # one poll a second, past the horizon
        clock.advance(1)
        poll(infrai)
    reads = (
        InfraiSettings(
            complaint_first_read_seconds=2, complaint_max_read_interval_seconds=8, complaint_horizon_seconds=30
        )
        .complaint_schedule()
        .read_offsets()
    )
    assert reads == [2, 4, 8, 16, 24, 30]
    assert gets(infrai) - asked == len(reads), "one read per step of the schedule, none after the horizon"
    assert due(infrai, DueKind.COMPLAINT) == 0
    assert view(infrai, sent["message_id"])["state"] == "delivered" and not suppressed(infrai, SUCCESS)


def test_a_complaint_read_late_in_the_schedule_still_suppresses(infrai: InfraiWorld) -> None:
    sent = send(infrai, "frank@example.com")
    infrai.parts.clock.advance(2)
    poll(infrai)
    [entry] = infrai.outbox()
    infrai.parts.clock.advance(12)  # reads at 2, 4, 8 s after the delivery said delivered
    for _ in range(12):
        infrai.parts.clock.advance(1)
        poll(infrai)
    from local.simulator.providers.infrai import side_of

    side_of(infrai.parts.simulator).reach(entry["provider_message_id"], "complained")  # 26 s after the delivery
    for _ in range(8):  # the read at the horizon (30 s) finds it
        infrai.parts.clock.advance(1)
        poll(infrai)
    assert view(infrai, sent["message_id"])["state"] == "complained"
    assert suppressed(infrai, "frank@example.com")
    assert due(infrai, DueKind.COMPLAINT) == 0


def test_complaint_reads_spread_over_the_due_index_shards(infrai: InfraiWorld) -> None:
    for i in range(48):
        send(infrai, f"r{i}@example.com", key=f"k-{i}")
    infrai.parts.clock.advance(2)
    infrai.parts.services.settings = infrai.parts.services.settings.configure_provider(
        InfraiSettings, statuses_per_cycle=100
    )
    poll(infrai)
    assert due(infrai, DueKind.COMPLAINT) == 48
    keys = Counter(
        item[names.DUE_WORK_INDEX_PARTITION_KEY]["S"]
        for item in boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
        if item.get(names.DUE_WORK_INDEX_PARTITION_KEY, {}).get("S", "").startswith(DueKind.COMPLAINT.value)
    )
    assert sum(keys.values()) == 48
    assert max(keys.values()) / 48 <= 1 / 4, f"complaint reads crowd one partition key: {keys}"


def test_a_complaint_is_read_with_what_the_cycle_leaves_after_messages_in_flight(infrai: InfraiWorld) -> None:
    services, clock = infrai.parts.services, infrai.parts.clock
    services.settings = services.settings.configure_provider(InfraiSettings, statuses_per_cycle=2)
    watched = send(infrai, COMPLAINT)
    clock.advance(2)
    poll(infrai)  # delivered; its complaint (3 s) is read at 4 s
    assert view(infrai, watched["message_id"])["state"] == "delivered"
    for i in range(2):
        send(infrai, f"late{i}@example.com", key=f"late-{i}")
    clock.advance(2)
    poll(infrai)  # two in flight fill the bound: the complaint waits
    assert view(infrai, watched["message_id"])["state"] == "delivered"
    clock.advance(1)
    poll(infrai)  # delivered: no longer in flight, the next cycle has room
    clock.advance(1)
    poll(infrai)
    assert view(infrai, watched["message_id"])["state"] == "complained" and suppressed(infrai, COMPLAINT)
