"""Each caller's callbacks on their own schedule: a failing receiver rests alone, its records
keep their attempts, a caller's lane holds the batch for its share at most, and the lookup and
the POST share one deadline."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from sendledger.domain.callback_schedule import (
    LANE_SHARE_SECONDS,
    MAX_QUEUE_DELAY_SECONDS,
    CircuitBreakers,
    Queued,
    give_up_after,
    hop_seconds,
)
from sendledger.domain.callbacks import SigningKeys
from sendledger.domain.caller_settings import CallerSettings
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import iso
from sendledger.usecases.callback_batch import deliver_batch
from sendledger.usecases.callbacks import CallbackPolicy, Delivery, Receivers, deliver_callback
from tests.support.fakes import FakeClock
from tests.unit.fakes.callbacks import ACCOUNT, FakeCallbackQueue, FakeResolver, FakeSecrets, RecordingEndpoint
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

SLOW, FAST = CallerId("a" * 24), CallerId("b" * 24)
HOSTS = {SLOW: "slow.example.com", FAST: "fast.example.com"}
POLICY = CallbackPolicy(retry_base_seconds=60, max_attempts=6, timeout_seconds=10)


@dataclass
class HangingEndpoint(RecordingEndpoint):
    """The slow caller's receiver never answers: its POST takes its whole deadline (on the clock),
    after the fast caller's `fast_posts` POSTs answered (the lanes run side by side, and the
    clock is one for both)."""

    clock: FakeClock = field(default_factory=FakeClock)
    fast_posts: int = 0
    fast_done: threading.Event = field(default_factory=threading.Event)

    def post(self, url, addresses, body, headers, timeout_seconds):  # type: ignore[no-untyped-def]
        super().post(url, addresses, body, headers, timeout_seconds)
        if url.host == HOSTS[SLOW]:
            assert not self.fast_posts or self.fast_done.wait(timeout=30)
            self.clock.advance(timeout_seconds)
            return None
        if len(self.to(f"https://{HOSTS[FAST]}/hook")) >= self.fast_posts:
            self.fast_done.set()
        return 204


@dataclass
class TakingEndpoint(RecordingEndpoint):
    """Every receiver answers 204 after `seconds` on the clock, or nothing within a shorter deadline."""

    clock: FakeClock = field(default_factory=FakeClock)
    seconds: float = 0.4

    def post(self, url, addresses, body, headers, timeout_seconds):  # type: ignore[no-untyped-def]
        super().post(url, addresses, body, headers, timeout_seconds)
        self.clock.advance(min(self.seconds, timeout_seconds))
        return 204 if self.seconds <= timeout_seconds else None


def world(clock: FakeClock) -> Receivers:
    store = FakeCallerSettings(LedgerState(), clock)
    resolver = FakeResolver()
    for caller, host in HOSTS.items():
        store.put(CallerSettings(caller, f"https://{host}/hook"))
        resolver.answer(host, "93.184.215.14")
    secrets = FakeSecrets({caller: SigningKeys("s") for caller in HOSTS})
    return Receivers(store, secrets, resolver, HangingEndpoint(clock=clock), CircuitBreakers())


def event(owner: CallerId, n: int, clock: FakeClock) -> Queued:
    detail = {"event_id": f"{owner[0]}-{n}", "caller_id": owner, "state": "accepted", "occurred_at": iso(clock.now())}
    body = {"detail-type": "sendledger.message.state-changed", "source": "sendledger", "account": ACCOUNT}
    return Queued(json.dumps({**body, "detail": detail}))


def run(records: list[Queued], receivers: Receivers, queue: FakeCallbackQueue, clock: FakeClock):  # type: ignore[no-untyped-def]
    return deliver_batch(records, account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock)


def test_a_receiver_that_never_answers_costs_one_timeout_and_its_other_records_rest_unattempted():
    # Given a batch where the slow caller's records come first
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    records = [event(SLOW, n, clock) for n in range(8)] + [event(FAST, n, clock) for n in range(2)]
    # When it is delivered
    assert isinstance(receivers.endpoint, HangingEndpoint)
    receivers.endpoint.fast_posts = 2
    outcomes = run(records, receivers, queue, clock)
    # Then the slow receiver got one POST; the others wait its rest, their attempts untouched
    kinds = [o.outcome for o in outcomes]  # type: ignore[union-attr]
    assert kinds == [Delivery.RETRYING] + [Delivery.RESTING] * 7 + [Delivery.DELIVERED] * 2
    endpoint = receivers.endpoint
    assert isinstance(endpoint, HangingEndpoint)
    assert len(endpoint.to(f"https://{HOSTS[SLOW]}/hook")) == 1 and len(endpoint.to(f"https://{HOSTS[FAST]}/hook")) == 2
    assert [q.attempts for q, _ in queue.put_backs] == [1] + [0] * 7
    assert {delay for _, delay in queue.put_backs[1:]} == {60}  # the rest: the first backoff delay


def test_a_receiver_that_never_answers_holds_the_batch_for_one_share_not_its_timeout():
    # Given a batch of the slow caller's records with the fast one's among them
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    assert isinstance(receivers.endpoint, HangingEndpoint)
    receivers.endpoint.fast_posts = 1
    started = clock.now()
    records = [event(SLOW, 0, clock), event(FAST, 0, clock), event(SLOW, 1, clock)]
    # When it is delivered
    outcomes = run(records, receivers, queue, clock)
    # Then the slow receiver's POST ended at the lane's share, not after the 10-second timeout,
    # and failed its attempt (it answered nothing in the whole share): its caller rests
    assert [o.outcome for o in outcomes] == [Delivery.RETRYING, Delivery.DELIVERED, Delivery.RESTING]  # type: ignore[union-attr]
    assert receivers.endpoint.timeouts[-1] == LANE_SHARE_SECONDS < POLICY.timeout_seconds
    assert (clock.now() - started).total_seconds() == LANE_SHARE_SECONDS
    assert receivers.breakers.failing(SLOW) and [q.attempts for q, _ in queue.put_backs] == [1, 0]


def test_a_receiver_that_answered_and_ran_out_of_share_gets_its_records_back_unattempted():
    # Given a receiver that takes 0.4 s per answer, and five of its records in a batch
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    receivers.endpoint = TakingEndpoint(clock=clock, seconds=0.4)
    records = [Queued(event(FAST, n, clock).body, attempts=2) for n in range(5)]
    # When it is delivered
    outcomes = run(records, receivers, queue, clock)
    # Then two answered within the share, the third was cut off by its end, the last two were not
    # tried: all three queued again at once with their attempts, and the caller does not rest
    kinds = [o.outcome for o in outcomes]  # type: ignore[union-attr]
    assert kinds == [Delivery.DELIVERED] * 2 + [Delivery.DEFERRED] * 3
    assert len(receivers.endpoint.posts) == 3  # type: ignore[attr-defined]
    assert queue.put_backs == [(record, 0) for record in records[2:]]
    assert not receivers.breakers.failing(FAST)


def test_after_the_rest_one_record_probes_and_a_failure_doubles_the_rest():
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    run([event(SLOW, n, clock) for n in range(3)], receivers, queue, clock)
    clock.advance(60)
    waiting = [q for q, _ in queue.put_backs[1:]]
    queue.put_backs.clear()
    outcomes = run(waiting, receivers, queue, clock)
    assert [o.outcome for o in outcomes] == [Delivery.RETRYING, Delivery.RESTING]  # type: ignore[union-attr]
    assert [(q.attempts, delay) for q, delay in queue.put_backs] == [(1, 60), (0, 120)]


def test_an_answer_closes_the_circuit():
    clock, queue = FakeClock(), FakeCallbackQueue()
    breakers = CircuitBreakers()
    breakers.failed(SLOW, clock.now(), 60)
    assert breakers.resting_until(SLOW, clock.now()) == clock.now() + timedelta(seconds=60)
    breakers.answered(SLOW)
    assert breakers.resting_until(SLOW, clock.now()) is None and not breakers.failing(SLOW)
    del queue


def test_a_record_waiting_for_a_resting_receiver_past_its_whole_schedule_goes_to_the_dlq():
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    old = event(SLOW, 0, clock)
    clock.advance(give_up_after(60, 6).total_seconds())  # 31 minutes later, the receiver still failing
    receivers.breakers.failed(SLOW, clock.now(), 60)
    outcome = deliver_callback(old, account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock)
    assert outcome.outcome is Delivery.GAVE_UP and [why for _, why in queue.dead] == ["gave-up"]
    assert give_up_after(60, 6) == timedelta(seconds=60 + 120 + 240 + 480 + 960)


def test_a_record_without_time_left_is_put_back_with_its_attempts():
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    record = Queued(event(FAST, 0, clock).body, attempts=3)
    outcome = deliver_callback(
        record, account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock, seconds_left=9
    )
    assert outcome.outcome is Delivery.DEFERRED and queue.put_backs == [(record, 0)]
    assert receivers.endpoint.posts == []  # type: ignore[attr-defined]


def test_a_backoff_longer_than_sqs_allows_takes_two_hops():
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    due = clock.now() + timedelta(seconds=960)
    assert hop_seconds(clock.now(), due) == MAX_QUEUE_DELAY_SECONDS
    record = Queued(event(FAST, 0, clock).body, attempts=5, due_at=due)
    clock.advance(MAX_QUEUE_DELAY_SECONDS)
    outcome = deliver_callback(record, account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock)
    assert outcome.outcome is Delivery.NOT_DUE and queue.put_backs == [(record, 60)]
    assert receivers.endpoint.posts == []  # type: ignore[attr-defined]


def test_the_lookup_spends_the_posts_deadline():
    # Given a resolver that takes 4 of the 10 seconds
    clock, queue = FakeClock(), FakeCallbackQueue()
    receivers = world(clock)
    assert isinstance(receivers.resolver, FakeResolver)
    receivers.resolver.clock, receivers.resolver.takes_seconds = clock, 4
    deliver_callback(
        event(FAST, 0, clock), account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock
    )
    # Then the POST gets the 6 left
    assert receivers.endpoint.timeouts == [6]  # type: ignore[attr-defined]
    # And a lookup that outlasts the deadline is a failed attempt with no POST
    receivers.resolver.takes_seconds = 11
    outcome = deliver_callback(
        event(FAST, 1, clock), account_id=ACCOUNT, policy=POLICY, receivers=receivers, queue=queue, clock=clock
    )
    assert outcome.outcome is Delivery.RETRYING and outcome.refused == "unresolved"
    assert len(receivers.endpoint.posts) == 1  # type: ignore[attr-defined]
