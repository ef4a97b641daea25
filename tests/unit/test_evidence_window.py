"""The evidence export's window and cursor (pure domain), and the export use case over the fakes."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from sendledger.domain.errors import InvalidRequest
from sendledger.domain.export_window import Position, decode_cursor, encode_cursor, parse_instant, window
from sendledger.usecases.evidence import export
from tests.support.fakes import ADMIN, CALLER
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import command, seconds_left

DAY = window("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
INSIDE = Position(datetime(2026, 1, 1, 12, tzinfo=UTC), "msg_" + "0" * 26)


def test_instants_need_a_zone_and_keep_milliseconds():
    assert parse_instant("2026-01-01T01:00:00.123456+01:00", "since") == datetime(2026, 1, 1, 0, 0, 0, 123000, UTC)
    for text in ("2026-01-01T00:00:00", "2026-01-01", "now", "2026-13-01T00:00:00Z"):
        with pytest.raises(InvalidRequest) as raised:
            parse_instant(text, "since")
        assert raised.value.errors[0]["field"] == "since"


def test_a_window_is_forward_and_at_most_31_days():
    assert window("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z").until == datetime(2026, 2, 1, tzinfo=UTC)
    for since, until in (("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"), ("2026-01-01T00:00:00Z",) * 2):
        with pytest.raises(InvalidRequest):
            window(since, until)
    with pytest.raises(InvalidRequest):
        window("2026-01-01T00:00:00Z", "2026-02-01T00:00:00.001Z")


def test_a_window_lists_the_days_it_touches():
    assert [d.day for d in window("2026-01-01T23:00:00Z", "2026-01-03T00:00:00Z").days()] == [1, 2]
    assert [d.day for d in window("2026-01-01T23:00:00Z", "2026-01-03T00:00:00.001Z").days()] == [1, 2, 3]


def test_a_cursor_round_trips_and_anything_else_is_refused():
    assert decode_cursor(encode_cursor(INSIDE), DAY) == INSIDE
    forged = [
        "x",
        "",
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
        base64.urlsafe_b64encode(json.dumps({"t": "2026-01-01T12:00:00.000Z", "m": "pk#x"}).encode()).decode(),
        encode_cursor(Position(DAY.until, INSIDE.message_id)),  # outside the window
    ]
    for cursor in forged:
        with pytest.raises(InvalidRequest) as raised:
            decode_cursor(cursor, DAY)
        assert raised.value.errors[0]["field"] == "cursor"


def test_export_pages_are_the_callers_own_oldest_first(world: FakeWorld):
    start = world.clock.now()
    mine = []
    for number in range(3):
        mine.append(world.runtime.sender.send(command(f"k-{number}"), seconds_left).view["message_id"])
        world.runtime.sender.send(command(f"theirs-{number}", principal=ADMIN), seconds_left)
        world.clock.advance(60)
    since, until = start.isoformat(), (world.clock.now() + timedelta(seconds=1)).isoformat()
    first = export(world.runtime.messages, CALLER, since, until, None, 2)
    assert [m.message_id for m in first.messages] == mine[:2] and first.cursor is not None
    second = export(world.runtime.messages, CALLER, since, until, first.cursor, 2)
    assert [m.message_id for m in second.messages] == mine[2:] and second.cursor is None
