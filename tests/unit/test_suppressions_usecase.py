"""The audited admin acts: every act is recorded, only a change changes state (and its version)."""

from __future__ import annotations

from sendledger.usecases.suppressions import change_suppression, view_suppression
from tests.support.fakes import ADMIN
from tests.unit.fakes import FakeWorld

ERIN = "erin@example.com"


def test_suppress_then_re_enable_each_bump_the_version(world: FakeWorld):
    suppressed = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "user asked", ADMIN)
    assert (suppressed.state.suppressed, suppressed.state.version) == (True, 1)
    world.clock.advance(60)
    enabled = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, False, "user asked again", ADMIN)
    assert (enabled.state.suppressed, enabled.state.version) == (False, 2)
    assert [(e["type"], e["version"]) for e in enabled.history] == [("suppressed", 1), ("unsuppressed", 2)]


def test_a_repeated_suppress_changes_no_state_but_is_audited(world: FakeWorld):
    first = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "user asked", ADMIN)
    world.clock.advance(60)
    again = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "user asked again", ADMIN)
    assert again.state == first.state, "version, reason and since unchanged"
    acts = [entry for entry in again.history if entry["source"] == "admin"]
    assert [(a["reason"], a.get("unchanged", False)) for a in acts] == [
        ("user asked", False),
        ("user asked again", True),
    ]
    assert acts[-1]["version"] == 1 and acts[-1]["actor"] == ADMIN


def test_re_enabling_a_never_suppressed_address_is_recorded_at_version_zero(world: FakeWorld):
    status = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, False, "cleanup", ADMIN)
    assert (status.state.suppressed, status.state.version) == (False, 0)
    assert [(e["type"], e["reason"], e["unchanged"]) for e in status.history] == [("unsuppressed", "cleanup", True)]
    # A later real suppression starts from that version
    assert (
        change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "bounced", ADMIN).state.version
        == 1
    )


def test_the_view_of_an_unknown_address_is_sendable_with_no_history(world: FakeWorld):
    status = view_suppression(world.runtime.recipients, ERIN.upper())
    assert status.recipient.lower() == ERIN
    assert (status.state.suppressed, status.state.version, status.history) == (False, 0, [])


def test_the_address_is_one_key_whatever_its_case(world: FakeWorld):
    change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "user asked", ADMIN)
    assert view_suppression(world.runtime.recipients, "Erin@Example.com").state.suppressed


def test_a_lift_records_its_actor_and_reason(world: FakeWorld):
    change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, True, "complaint", ADMIN)
    oncall = "arn:aws:iam::123456789012:user/oncall"
    lifted = change_suppression(
        world.runtime.recipients, world.runtime.clock, ERIN, False, "user confirmed by phone", oncall
    )
    [lift] = [entry for entry in lifted.history if entry["type"] == "unsuppressed"]
    assert (lift["actor"], lift["reason"]) == (oncall, "user confirmed by phone")
    # A repeated lift changes nothing, and is audited with its own actor and reason too
    again = change_suppression(world.runtime.recipients, world.runtime.clock, ERIN, False, "double-checked", ADMIN)
    assert [(e["actor"], e["reason"]) for e in again.history if e["type"] == "unsuppressed"] == [
        (oncall, "user confirmed by phone"),
        (ADMIN, "double-checked"),
    ]
