"""Fault schedules over the send path: a crash or timeout at each step, then client retries.

Steps of POST /v1/messages: the intent transaction, the provider call, the
provider's acceptance, the outcome write. At each one the first request meets a fault (an
exception that kills the invocation, or a timeout the code sees); the fault then clears and the
client retries the same intent: at once, and after the 60 s lease.

Password resets are asynchronous: POST /v1/password-resets writes the reset and its `pending`
mail in one transaction; the poller mints the token (a conditional hash swap), sends, records
the outcome. The same faults hit the request (intent transaction) or the poll cycle (mint,
provider call, acceptance, outcome write); a poll cycle runs after every request.

After every request the whole table and the provider's outbox are checked (the LedgerWatch):
- never two accepted sends for one intent, never one to a suppressed recipient,
- no intent lost: a message row in a defined state, unsettled rows on the due-work index, an
  idempotency record that ends up answering 202 with the message view (never 5xx forever),
- never two valid tokens for one caller's account (one RESET# item; at most one mailed token works),
- history append-only (no entry ever changes or disappears), states only moving forward.
Then the poller recovers whatever the fault left (settle): it runs until quiescent on the fake
clock, and every intent must end settled (terminal, `unresolved` included), sent at most once.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from sendledger.adapters.dynamodb.keys import reset_pk
from sendledger.adapters.dynamodb.message_items import record_from
from sendledger.domain.clock import iso
from sendledger.domain.messages import TERMINAL
from tests.conftest import HYPOTHESIS_SEED
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import (
    FIGURES,
    Answer,
    Fault,
    LedgerWatch,
    connect_timeout,
    crash,
    due_kind_of,
    emails_to,
    internal_error,
    items_with,
    mailed_tokens,
    merged_state,
    message_id_of,
    read_timeout,
    s,
    ses_error,
    valid_tokens,
)
from tests.support.fakes import ADMIN, CALLER

LEASE_SECONDS = 60
GRACE_SECONDS = 900  # UNKNOWN_GRACE_SECONDS of the shared world's settings
QUIESCENCE_CYCLES = 8
TX = "TransactWriteItems"
OUTCOME = "UpdateItem"
MESSAGE_VIEW_KEYS = {"message_id", "state", "channel", "to", "template", "created_at", "updated_at"}
RESET_VIEW_KEYS = {"reset_id", "state", "expires_at"}


@dataclass(frozen=True)
class Schedule:
    """Where the first request breaks, and what the world must look like once retries settle."""

    name: str
    dynamo: Callable[[], list[Fault]] = list
    ses: Callable[[], list[Fault]] = list
    label: str = ""  # simulator address label (+timeout-accepted, +timeout-lost, +throttle)
    crash_after_record_outcome: bool = False
    sends: int | None = 1  # accepted sends expected for the intent once retries settle
    state: str = "accepted"  # message state once the client's retries settle
    settled: str = "delivered"  # message state once the poller has recovered everything
    poll_dynamo: Callable[[], list[Fault]] = list  # reset-only: the poller's mint transaction


SCHEDULES = [
    Schedule("no-fault"),
    # 1. before the intent: the transaction never lands
    Schedule("intent-crash-before-write", dynamo=lambda: [Fault(TX, "send", crash, call=1)]),
    Schedule("intent-timeout-before-write", dynamo=lambda: [Fault(TX, "send", read_timeout, call=1)]),
    # 1b. the intent landed but its answer was lost: the retry must not start a second intent
    Schedule("intent-crash-after-write", dynamo=lambda: [Fault(TX, "after", crash, call=1)], sends=0, state="sending"),
    Schedule(
        "intent-timeout-after-write",
        dynamo=lambda: [Fault(TX, "after", read_timeout, call=1)],
        sends=0,
        state="sending",
    ),
    Schedule(
        "intent-500-after-write",
        dynamo=lambda: [Fault(TX, "after", internal_error, call=1)],
        sends=0,
        state="sending",
    ),
    # 2. after the intent: the provider call itself fails
    Schedule("provider-call-crashes", ses=lambda: [Fault("SendEmail", "send", crash)], sends=0, state="sending"),
    Schedule(
        "provider-unreachable",
        ses=lambda: [Fault("SendEmail", "send", connect_timeout, call=None)],
        sends=0,
        state="pending",
    ),
    Schedule(
        "provider-5xx",
        ses=lambda: [Fault("SendEmail", "send", ses_error("InternalFailure", 500))],
        sends=0,
        state="unknown",
    ),
    Schedule("provider-timeout-lost", label="timeout-lost", sends=0, state="unknown"),
    Schedule("provider-throttled-twice", label="throttle"),
    # 3. after the provider accepted
    Schedule("accepted-then-timeout", label="timeout-accepted", state="unknown"),
    Schedule("accepted-then-crash", ses=lambda: [Fault("SendEmail", "after", crash)], state="sending"),
    # 4. the outcome write (one conditional UpdateItem on the message item)
    Schedule(
        "outcome-crash-before-write",
        dynamo=lambda: [Fault(OUTCOME, "send", crash, call=1, key_prefix="MSG#")],
        state="sending",
    ),
    Schedule(
        "outcome-timeout-before-write",
        dynamo=lambda: [Fault(OUTCOME, "send", read_timeout, call=1, key_prefix="MSG#")],
        state="sending",
    ),
    Schedule(
        "outcome-timeout-after-write", dynamo=lambda: [Fault(OUTCOME, "after", read_timeout, call=1, key_prefix="MSG#")]
    ),
    Schedule(
        "outcome-500-after-write", dynamo=lambda: [Fault(OUTCOME, "after", internal_error, call=1, key_prefix="MSG#")]
    ),
    Schedule("crash-after-record-outcome", crash_after_record_outcome=True),
]

REJECTED = Schedule(
    "provider-rejects",
    ses=lambda: [Fault("SendEmail", "send", ses_error("MessageRejected", 400))],
    sends=0,
    state="rejected",
    settled="rejected",
)

# The poller's mint: the conditional hash swap that moves the reset mail to `sending`.
MINT_SCHEDULES = [
    Schedule("mint-crash-before-write", poll_dynamo=lambda: [Fault(TX, "send", crash, call=1)]),
    Schedule("mint-timeout-before-write", poll_dynamo=lambda: [Fault(TX, "send", read_timeout, call=1)]),
    Schedule("mint-crash-after-write", poll_dynamo=lambda: [Fault(TX, "after", crash, call=1)]),
    Schedule("mint-timeout-after-write", poll_dynamo=lambda: [Fault(TX, "after", read_timeout, call=1)]),
]

# Where a reset ends once the user asked three times (at once, and past the lease), a poll
# cycle after each: (accepted reset mails, state of the reset's mail). A mail that may have
# reached SES is never re-minted blindly: it waits `unknown` for the lookup.
RESET_EXPECTED = {
    "no-fault": (1, "accepted"),
    "intent-crash-before-write": (1, "accepted"),
    "intent-timeout-before-write": (1, "accepted"),
    "intent-crash-after-write": (1, "accepted"),  # the reset landed: the poller mails it
    "intent-timeout-after-write": (1, "accepted"),
    "intent-500-after-write": (1, "accepted"),
    "provider-call-crashes": (0, "unknown"),  # lease expired: may have been sent
    "provider-unreachable": (1, "accepted"),  # proven not accepted: re-minted, same reset id
    "provider-5xx": (0, "unknown"),
    "provider-timeout-lost": (0, "unknown"),
    "provider-throttled-twice": (1, "accepted"),
    "accepted-then-timeout": (1, "unknown"),
    "accepted-then-crash": (1, "unknown"),
    "outcome-crash-before-write": (1, "unknown"),
    "outcome-timeout-before-write": (1, "unknown"),
    "outcome-timeout-after-write": (1, "accepted"),
    "outcome-500-after-write": (1, "accepted"),
    "crash-after-record-outcome": (1, "accepted"),
    "provider-rejects": (0, "rejected"),
    "mint-crash-before-write": (1, "accepted"),  # nothing written: the mail is still due
    "mint-timeout-before-write": (1, "accepted"),
    "mint-crash-after-write": (0, "unknown"),  # in flight with a fresh hash, then the lease expired
    "mint-timeout-after-write": (0, "unknown"),
}


class World:
    """The shared world plus the fault arming of one schedule."""

    def __init__(self, shared: SharedWorld) -> None:
        self.shared = shared
        self.client, self.clock, self.services = shared.client, shared.clock, shared.services
        # `ses`: the provider call's faults, whichever provider the world runs (SES's SendEmail hooks,
        # or an HTTP provider's transport: tests/reliability/provider_legs.py)
        self.dynamo, self.ses, self.watch = shared.dynamo, shared.leg.faults, shared.watch
        self.schedules_run = 0
        self.faults_fired = 0

    def once(self, schedule: Schedule, request: Callable[[], Any], must_fire: bool = True, phase: str = "all") -> Any:
        """One invocation with the schedule's faults of ``phase`` armed; they clear afterwards.

        ``all``: every fault (POST /v1/messages does intent, provider call and outcome);
        ``request``: the intent transaction only (POST /v1/password-resets);
        ``poll``: the poller's half of a reset (mint, provider call, outcome write).
        """
        dynamo, ses = schedule.dynamo(), schedule.ses()
        crash_after_outcome = schedule.crash_after_record_outcome

        def intent(fault: Fault) -> bool:
            return fault.operation == TX and fault.call == 1

        if phase == "request":
            dynamo, ses, crash_after_outcome = [f for f in dynamo if intent(f)], [], False
        elif phase == "poll":
            dynamo = [*schedule.poll_dynamo(), *[f for f in dynamo if not intent(f)]]
        faults = [*dynamo, *ses]
        self.dynamo.arm(*dynamo)
        self.ses.arm(*ses)
        messages = self.services.messages
        real = messages.record_outcome
        died = []
        if crash_after_outcome:

            def record_then_die(outcome: Any) -> None:
                real(outcome)
                died.append(True)
                crash()

            messages.record_outcome = record_then_die
        try:
            return request()
        finally:
            self.dynamo.disarm()
            self.ses.disarm()
            if crash_after_outcome:
                del messages.record_outcome
            fired = sum(1 for f in faults if f.fired) + len(died)
            self.faults_fired += fired
            FIGURES["faults_armed"] += len(faults) + int(crash_after_outcome)
            FIGURES["faults_fired"] += fired
            if must_fire:  # a fault that never fired would turn the schedule into "no fault"
                assert all(f.fired for f in faults), f"{schedule.name}: a fault never fired"
                assert died or not crash_after_outcome, schedule.name


def settle(world: World) -> dict[str, str]:
    """Recovery: the provider's events flow and the poller runs, the fake clock passing leases and
    the grace, until nothing changes any more (leases expired, `unknown` resolved, absence proven
    or not, resends done). Returns every message's state once quiescent."""

    def snapshot() -> tuple[dict[str, str], int]:
        items = world.watch.check()
        states = {message_id_of(m): merged_state(items, message_id_of(m)) for m in items_with(items, "MSG#", "MSG")}
        return states, len(world.shared.leg.outbox())

    last, aged = snapshot(), False
    for _ in range(QUIESCENCE_CYCLES):
        world.clock.advance(GRACE_SECONDS + LEASE_SECONDS)  # each cycle sees leases and the grace pass
        world.shared.leg.emit()  # the provider's events for what it accepted reach sendledger
        world.shared.poll()
        now = snapshot()
        if now == last and not world.shared.leg.pending():
            unsettled = {m: state for m, state in now[0].items() if state not in SETTLED}
            if unsettled and not aged:
                # An `unknown` whose absence cannot be proven waits for UNKNOWN_MAX_AGE_SECONDS
                world.clock.advance(world.services.settings.unknown_max_age_seconds)
                aged = True
                continue
            # Then every intent is settled: terminal, or explicitly unresolved (never left in flight)
            assert not unsettled, f"not settled after recovery: {unsettled}"
            FIGURES["recoveries_to_quiescence"] += 1
            return now[0]
        last = now
    raise AssertionError(f"the poller did not reach quiescence in {QUIESCENCE_CYCLES} cycles: {last}")


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedWorld]:
    with shared_world() as world:
        yield world
    print(f"\nfault schedules run: {RUN['schedules']}, ledger observations: {LedgerWatch.total_observations}")


@pytest.fixture
def world(shared: SharedWorld) -> World:
    # Each schedule starts from an empty ledger and a healthy pipeline
    shared.fresh()
    return World(shared)


RUN = {"schedules": 0}
SETTLED = {state.value for state in TERMINAL}  # `unresolved` is one of them


def address(schedule: Schedule) -> str:
    local = f"{schedule.name}-{uuid.uuid4().hex[:8]}"
    return f"{local}+{schedule.label}@example.com" if schedule.label else f"{local}@example.com"


def alert(to: str) -> dict[str, Any]:
    return {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def assert_well_formed(answer: Answer) -> None:
    """What a client may rely on for any answer, faulted or not."""
    assert answer.status in {202, 409, 502, 503}, answer
    if answer.status == 502:
        assert answer.crashed == "InjectedCrash", answer  # only the fault we injected kills the invocation
    if answer.status in (409, 503):
        assert answer.is_problem and answer.retry_after and answer.retry_after >= 1, answer
    if answer.status == 202 and "message_id" in (answer.body or {}):
        assert set(answer.body) >= MESSAGE_VIEW_KEYS, answer
        if answer.body["state"] in ("pending", "unknown", "sending"):
            assert answer.retry_after and answer.retry_after >= 1, answer


# --- POST /v1/messages ----------------------------------------------------------------------
def run_message_schedule(world: World, schedule: Schedule) -> None:
    to = address(schedule)
    key = f"intent-{uuid.uuid4().hex}"

    def send() -> Answer:
        answer = world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
        assert_well_formed(answer)
        world.watch.check()
        assert len(emails_to(to)) <= 1, f"{schedule.name}: two accepted sends for one intent"
        assert len([e for e in world.shared.leg.outbox() if e["to"] == to]) <= 1, schedule.name
        return answer

    # Given the first request meets the fault
    first = world.once(schedule, send)
    # When the client retries with the same key at once, and again after the lease
    again = send()
    world.clock.advance(LEASE_SECONDS + 1)
    settled = send()
    world.dynamo.arm()  # no faults: counts the replay's DynamoDB requests
    replay = send()
    replay_requests = sum(world.dynamo.calls.values())
    # Then the intent was sent at most once and is not lost: past the lease the key answers
    # 202 with the message view, and keeps answering the same
    answers = [first, again, settled, replay]
    assert settled.status == 202 and replay.status == 202, (schedule.name, answers)
    assert replay.body == settled.body and replay.headers.get("idempotent-replayed") == "true"
    assert len({a.body["message_id"] for a in answers if a.status == 202}) == 1, answers
    assert settled.body["state"] == schedule.state, (schedule.name, settled.body)
    # (the message item is the key's idempotency record)
    [record] = [m for m in items_with(world.watch.check(), "MSG#", "MSG") if s(m, "idem_key")]
    if s(record, "response"):
        # And a completed key replays its stored answer in one DynamoDB request
        answer = record_from(record)
        assert answer is not None and answer.response is not None
        stored = answer.response.message
        assert (replay.body["state"], replay.body["updated_at"]) == (stored.state.value, iso(stored.updated_at))
        assert replay_requests == 1, replay_requests
    if schedule.sends is not None:
        assert len(emails_to(to)) == schedule.sends, schedule.name
    _, _, view = world.client.api("GET", f"/v1/messages/{settled.body['message_id']}")
    assert view["history"][0]["type"] == "intent"
    # When the poller recovers whatever the fault left behind
    states = settle(world)
    # Then the intent ends settled, sent exactly as often as it should have been (never twice)
    assert states[settled.body["message_id"]] == schedule.settled, (schedule.name, states)
    assert len(emails_to(to)) == (1 if schedule.settled != "rejected" else 0), schedule.name
    RUN["schedules"] += 1
    FIGURES["fault_schedules"] += 1


@pytest.mark.parametrize("schedule", [*SCHEDULES, REJECTED], ids=lambda sc: sc.name)
def test_message_fault_schedule(world, schedule):
    run_message_schedule(world, schedule)


# --- POST /v1/password-resets -----------------------------------------------------------------
def check_tokens(world: World, account: str, email: str, expect_one_valid: bool) -> None:
    items = world.watch.check()
    mailed = mailed_tokens(email)
    valid = valid_tokens(account, mailed, items, iso(world.clock.now()))
    assert len(valid) <= 1, f"two valid tokens for {account}"
    if expect_one_valid and mailed:
        assert valid == [mailed[-1]], "the newest mailed link must be the one that works"


def run_reset_schedule(world: World, schedule: Schedule) -> None:
    email = address(schedule)
    account = f"acct-{uuid.uuid4().hex[:12]}"
    body = {"account_id": account, "email": email}

    def check() -> None:
        assert len(emails_to(email)) <= 1, f"{schedule.name}: two reset mails for one reset"
        check_tokens(world, account, email, expect_one_valid=True)

    def request(faulted: bool = False) -> Answer:
        ask = lambda: world.client("POST", "/v1/password-resets", body)  # noqa: E731
        answer = world.once(schedule, ask, phase="request") if faulted else ask()
        assert_well_formed(answer)
        if answer.status == 202:
            assert set(answer.body) == RESET_VIEW_KEYS and "token" not in str(answer.body)
        check()
        # the poll cycle within a poll interval: the poller mints, mails, records
        if faulted:
            world.once(schedule, world.shared.poll, phase="poll")
        else:
            world.shared.poll()
        check()
        return answer

    # Given the first request (or the poll cycle that mails it) meets the fault
    first = request(faulted=True)
    # When the user asks again at once, and again a minute later (inside the reset window),
    # a poll cycle running after each request
    again = request()
    world.clock.advance(LEASE_SECONDS + 1)
    settled = request()
    # Then every answer names the same reset, nothing is mailed twice, one token at most works
    answers = [first, again, settled]
    assert again.status == 202 and settled.status == 202, (schedule.name, answers)
    assert len({a.body["reset_id"] for a in answers if a.status == 202}) == 1, answers
    expected_sends, expected_state = RESET_EXPECTED[schedule.name]
    assert len(emails_to(email)) == expected_sends, schedule.name
    items = world.watch.check()
    [reset] = [r for r in items_with(items, "RESET#") if s(r, "pk") == reset_pk(CALLER, account)]
    assert s(reset, "reset_id") == settled.body["reset_id"]
    [message] = [m for m in items_with(items, "MSG#", "MSG") if message_id_of(m) == s(reset, "message_id")]
    state = merged_state(items, message_id_of(message))
    # (where the poll cycle reads the provider's record, its lookup or events may already have
    # resolved an accepted mail: to `accepted`, or on to where the provider's events take it)
    pulled = {"accepted", schedule.settled} if world.shared.leg.pulls_events and expected_sends else set()
    assert state in {expected_state, *pulled}, (schedule.name, state)
    # And consuming every token ever mailed, oldest first: only the newest works, once
    mailed = mailed_tokens(email)
    results = [world.client("POST", "/v1/password-resets/consume", {"account_id": account, "token": t}) for t in mailed]
    assert [r.status for r in results].count(200) == min(1, len(mailed)), results
    if mailed:
        assert results[-1].status == 200 and results[-1].body["reset_id"] == s(reset, "reset_id")
    # When the poller recovers whatever the fault left behind; Then the reset mail is settled,
    # sent at most once, and no token works any more after the window
    states = settle(world)
    assert len(emails_to(email)) <= 1, schedule.name
    assert states[s(reset, "message_id")] in SETTLED, states
    check_tokens(world, account, email, expect_one_valid=False)
    RUN["schedules"] += 1
    FIGURES["fault_schedules"] += 1


@pytest.mark.parametrize("schedule", [*SCHEDULES, REJECTED, *MINT_SCHEDULES], ids=lambda sc: sc.name)
def test_reset_fault_schedule(world, schedule):
    run_reset_schedule(world, schedule)


def test_same_key_race_on_a_suppressed_recipient_replays(world):
    to = address(Schedule("suppressed-race"))
    assert world.client("PUT", f"/v1/admin/suppressions/{quote(to, safe='')}", {"reason": "r"}, principal=ADMIN).ok
    send = lambda: world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "race"})  # noqa: E731
    messages, raced, inner = world.services.messages, [], []
    real = messages.commit_decided

    def a_retry_lands_first(intent: Any, stored: Any) -> Any:
        if not raced:
            raced.append(True)
            inner.append(send())  # the same request, from another container, wins the race
        return real(intent, stored)

    messages.commit_decided = a_retry_lands_first
    try:
        # Given two same-key requests both decide "suppressed"; When the second one writes last
        outer = send()
    finally:
        del messages.commit_decided
    # Then both answer the stored decision (202 suppressed), and nothing is half-written
    assert inner[0].status == 202 and inner[0].body["state"] == "suppressed"
    assert outer.status == 202 and outer.body == inner[0].body, outer
    assert outer.headers.get("idempotent-replayed") == "true"
    world.watch.check()


@pytest.mark.parametrize("how", ["replaced-after-window", "invalidated-by-guessing"])
def test_mail_of_a_reset_no_longer_active_is_cancelled(world, how):
    email, account = address(Schedule(f"stuck-{how}")), f"acct-{uuid.uuid4().hex[:12]}"
    body = {"account_id": account, "email": email}
    # Given a reset whose mail is pending (SES unreachable during the poll cycle)
    assert world.client("POST", "/v1/password-resets", body).status == 202
    with world.ses.armed(Fault("SendEmail", "send", connect_timeout, call=None)):
        world.shared.poll()
    [first] = [m for m in items_with(world.watch.check(), "MSG#", "MSG") if s(m, "reset_account_id") == account]
    assert s(first, "state") == "pending" and due_kind_of(first) == "pending"
    # When the reset stops being active before the retry (a new reset after the window, or
    # RESET_MAX_FAILED_ATTEMPTS wrong guesses), and the poller reaches the pending mail
    if how == "replaced-after-window":
        world.clock.advance(world.services.settings.reset_window_seconds + 1)
        assert world.client("POST", "/v1/password-resets", body).status == 202
    else:
        for _ in range(world.services.settings.reset_max_failed_attempts):
            world.client("POST", "/v1/password-resets/consume", {"account_id": account, "token": "W" * 43})
        world.clock.advance(LEASE_SECONDS + 1)
    world.shared.poll()
    # Then the old mail is settled for good (`cancelled`, off the due work), never left pending
    items = world.watch.check()
    [old] = [m for m in items_with(items, "MSG#", "MSG") if message_id_of(m) == message_id_of(first)]
    assert s(old, "state") == "cancelled" and s(old, "state") in {st.value for st in TERMINAL}, old
    assert s(old, "due_kind") is None
    # And only the replacing reset (if any) was mailed
    assert len(mailed_tokens(email)) == (1 if how == "replaced-after-window" else 0)


# --- random multi-fault schedules ---------------------------------------------------------------
# Every step arms a fault that applies to the flow (no "no-fault" step; the mint's faults only
# apply to resets). The first step's fault always fires: it hits the intent transaction, or for a
# reset the poller's first mint, which no simulator label can pre-empt.
MESSAGE_STEP_FAULTS = [sc for sc in SCHEDULES if not sc.label and sc.name != "no-fault"]
RESET_STEP_FAULTS = [*MESSAGE_STEP_FAULTS, *MINT_SCHEDULES]
INTENT_FAULTS = [sc for sc in MESSAGE_STEP_FAULTS if sc.name.startswith("intent-")]


def plans(reset: bool) -> st.SearchStrategy[tuple[bool, list[tuple[Schedule, int]]]]:
    first = st.sampled_from([*INTENT_FAULTS, *MINT_SCHEDULES] if reset else INTENT_FAULTS)
    later = st.sampled_from(RESET_STEP_FAULTS if reset else MESSAGE_STEP_FAULTS)
    pauses = st.sampled_from([0, 1, LEASE_SECONDS + 1, 700])
    steps = st.tuples(first.map(lambda fault: (fault, 0)), st.lists(st.tuples(later, pauses), max_size=3))
    return st.tuples(st.just(reset), steps.map(lambda both: [both[0], *both[1]]))


@seed(HYPOTHESIS_SEED)
@settings(
    max_examples=200 if os.environ.get("SENDLEDGER_SOAK") == "1" else 25,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(flow=st.booleans().flatmap(plans), label=st.sampled_from(["", "timeout-accepted", "timeout-lost", "throttle"]))
def test_random_fault_schedules_keep_the_invariants(world, flow, label):
    run_random_schedule(world, flow, label)


def run_random_schedule(world: World, flow: tuple[bool, list[tuple[Schedule, int]]], label: str) -> None:
    reset, plan = flow
    # Given a fresh intent (a new key, account and address), a healthy pipeline now
    world.shared.fresh()
    world.watch = world.shared.watch
    to = address(Schedule(f"random-{label or 'plain'}", label=label))
    account, key = f"acct-{uuid.uuid4().hex[:12]}", f"random-{uuid.uuid4().hex}"
    answers: list[Answer] = []
    fired_before = world.faults_fired
    # When each attempt meets its fault, separated by clock jumps (some past the lease, some
    # past the reset window, which legitimately starts a new reset)
    for schedule, pause in plan:
        world.clock.advance(pause)
        if reset:
            ask = lambda: world.client("POST", "/v1/password-resets", {"account_id": account, "email": to})  # noqa: E731
            answer = world.once(schedule, ask, must_fire=False, phase="request")
            world.watch.check()
            world.once(schedule, world.shared.poll, must_fire=False, phase="poll")
        else:
            answer = world.once(
                schedule,
                lambda: world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key}),
                must_fire=False,
            )
        answers.append(answer)
        # Then after every attempt the invariants hold
        assert_well_formed(answer)
        world.watch.check()
        if reset:
            check_tokens(world, account, to, expect_one_valid=False)
        else:
            assert len(emails_to(to)) <= 1, answers
    if not reset:
        # And once the lease is over and faults are gone, the key answers 202
        world.clock.advance(LEASE_SECONDS + 1)
        final = world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
        assert final.status == 202 and set(final.body) >= MESSAGE_VIEW_KEYS, [*answers, final]
    else:
        mailed = mailed_tokens(to)
        results = [
            world.client("POST", "/v1/password-resets/consume", {"account_id": account, "token": t}) for t in mailed
        ]
        assert [r.status for r in results].count(200) <= 1
    # And the schedule really was faulted: at least one injected fault fired
    assert world.faults_fired > fired_before, f"no fault fired: {plan}"
    # And once the poller has recovered, every intent is settled and was sent at most once
    # (a pause past the reset window legitimately starts a second reset, with its own mail)
    states = settle(world)
    resets = [m for m in items_with(world.watch.check(), "MSG#", "MSG") if s(m, "reset_account_id") == account]
    assert len(emails_to(to)) <= (len(resets) if reset else 1), (answers, states)
    check_tokens(world, account, to, expect_one_valid=False)
    RUN["schedules"] += 1
    FIGURES["fault_schedules"] += 1
    FIGURES["random_fault_schedules"] += 1
