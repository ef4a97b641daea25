"""The fault schedules against every other email provider (provider_legs.LEGS).

SES runs the whole fault matrix in test_fault_matrix.py. Each other provider runs, in CI, the
schedules that reach its own code: its adapter's reading of each fault (no connection, a 5xx, an
answer lost before or after acceptance, a throttle, a refusal, a crash once it accepted), and its
way of settling an `unknown` (SendGrid's webhook watermark, Mailgun's Events API search,
Infrai's lookup by key), its own events. The DynamoDB faults (the intent and outcome writes)
run the same use cases whichever provider carries the message, in full for SES and one of
each here. SENDLEDGER_SOAK=1 runs every schedule, and the random multi-fault schedules, for
every provider. The state machine's provider legs are in test_stateful_ledger.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.conftest import HYPOTHESIS_SEED
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import Fault, crash
from tests.reliability.provider_legs import LEGS, SEND, index_lag, lagging_index
from tests.reliability.test_fault_matrix import (
    GRACE_SECONDS,
    LEASE_SECONDS,
    MINT_SCHEDULES,
    REJECTED,
    SCHEDULES,
    Schedule,
    World,
    address,
    alert,
    plans,
    run_message_schedule,
    run_random_schedule,
    run_reset_schedule,
    settle,
)

SOAK = os.environ.get("SENDLEDGER_SOAK") == "1"
OTHER_LEGS = [leg for leg in LEGS if leg != "ses"]
# The CI sample (see the docstring): the provider-facing schedules, and one DynamoDB fault each side of the call.
MESSAGE_SAMPLE = {
    "provider-call-crashes",
    "provider-unreachable",
    "provider-5xx",
    "provider-timeout-lost",
    "provider-throttled-twice",
    "accepted-then-timeout",
    "accepted-then-crash",
    "provider-rejects",
    "intent-timeout-after-write",
    "outcome-crash-before-write",
}
RESET_SAMPLE = {"provider-timeout-lost", "accepted-then-timeout", "outcome-crash-before-write"}


def cases(schedules: list, sample: set[str]) -> list:  # type: ignore[type-arg]
    return [
        pytest.param(leg, schedule, id=f"{leg}-{schedule.name}")
        for leg in OTHER_LEGS
        for schedule in schedules
        if SOAK or schedule.name in sample
    ]


@pytest.fixture(scope="module")
def shared(request: pytest.FixtureRequest) -> Iterator[SharedWorld]:
    with shared_world(request.param) as world:
        yield world


@pytest.fixture
def world(shared: SharedWorld) -> World:
    shared.fresh()
    return World(shared)


@pytest.mark.parametrize(("shared", "schedule"), cases([*SCHEDULES, REJECTED], MESSAGE_SAMPLE), indirect=["shared"])
def test_message_fault_schedule_per_provider(world, schedule):
    run_message_schedule(world, schedule)


@pytest.mark.parametrize(
    ("shared", "schedule"), cases([*SCHEDULES, REJECTED, *MINT_SCHEDULES], RESET_SAMPLE), indirect=["shared"]
)
def test_reset_fault_schedule_per_provider(world, schedule):
    run_reset_schedule(world, schedule)


@pytest.mark.skipif(not SOAK, reason="SENDLEDGER_SOAK=1: random multi-fault schedules for every provider")
@pytest.mark.parametrize("shared", OTHER_LEGS, indirect=True)
@seed(HYPOTHESIS_SEED)
@settings(
    max_examples=100,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(flow=st.booleans().flatmap(plans), label=st.sampled_from(["", "timeout-accepted", "timeout-lost", "throttle"]))
def test_random_fault_schedules_per_provider(world, flow, label):
    run_random_schedule(world, flow, label)


POLL_EVERY = 120


@pytest.mark.parametrize("shared", OTHER_LEGS, indirect=True)
def test_a_lookup_not_found_inside_the_grace_is_no_proof_per_provider(world):
    """Two timed-out sends: one the provider accepted before the sender died (its lease ends long
    before the grace, and its lookup answers "not found" until the index catches up), one it never
    got. No provider call inside the grace; the accepted one is found, the lost one resent once.
    The provider's pushed events are held back meanwhile: the lookup is the only evidence."""
    leg = world.shared.leg
    crashed = Schedule("accepted-then-crash", ses=lambda: [Fault(SEND, "after", crash)])
    lost = Schedule("provider-timeout-lost", label="timeout-lost")
    keys = {crashed.name: "lag-crashed", lost.name: "lag-lost"}
    to = {crashed.name: address(crashed), lost.name: address(lost)}

    def post(schedule: Schedule) -> object:
        headers = {"Idempotency-Key": keys[schedule.name]}
        return world.client("POST", "/v1/messages", alert(to[schedule.name]), headers=headers)

    def state(schedule: Schedule) -> str:
        query = {"idempotency_key": keys[schedule.name]}
        status, _, view = world.client.api("GET", "/v1/messages", query=query)
        assert status == 200, view
        return str(view["state"])

    lag = index_lag(leg.name)
    with lagging_index(leg, lag):
        assert world.once(crashed, lambda: post(crashed)).status == 502
        assert post(lost).body["state"] == "unknown"
        assert leg.faults.calls[SEND] == 2
        elapsed = 0.0
        while elapsed + POLL_EVERY < GRACE_SECONDS:  # leases end, watermarks pass both sends
            world.clock.advance(POLL_EVERY)
            elapsed += POLL_EVERY
            world.shared.poll()
            world.watch.check()
            found = state(crashed)
            assert found == "unknown" if elapsed < lag else found in ("accepted", "delivered"), (elapsed, found)
            assert state(lost) == "unknown", elapsed
            assert leg.faults.calls[SEND] == 2, f"a provider call {elapsed:.0f} s after the send, inside the grace"
    world.clock.advance(GRACE_SECONDS + LEASE_SECONDS)  # past the grace: the lost one is absent
    leg.emit()
    world.shared.poll()
    assert leg.faults.calls[SEND] == 3, "the lost send, once more"
    states = settle(world)
    assert set(states.values()) == {"delivered"}, states
    for schedule in (crashed, lost):
        assert len(leg.emails_to(to[schedule.name])) == 1, schedule.name
    assert leg.faults.calls[SEND] == 3
