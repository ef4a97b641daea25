"""The state machine's status-out steps: the publisher and the callbacks between the ledger's steps.

Mixed into tests/reliability/test_stateful_ledger.py's LedgerMachine: while sends, events,
resets and polls commit, the publisher takes stream batches (some of its PutEvents entries
refused in a 200, or killed before or after a PutEvents), a batch comes again (at least once),
the callbacks take queue batches against a receiver that answers, fails, resets, keeps the
request or answers late, the callbacks die after a POST, and the clock jumps to the next
retry. After every step nothing is on the bus, or at the receiver, that the ledger does not
hold, and no request reached the receiver unsigned; at the end everything drains and the
invariants of tests/reliability/status_out_world.py hold.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.reliability.event_sources import queue_depth
from tests.reliability.faults import FIGURES, Fault
from tests.reliability.killer import LambdaKilled
from tests.reliability.status_out_world import StatusOutWorld, every, put_events_partly_failing
from tests.support import receiver as r

PUT = "PutEvents"
RECEIVER_MODES = [r.OK, r.OK, r.FAIL, r.RESET, r.SLOW, r.BLACKHOLE]
REAL_WAIT_SECONDS = 0.02  # a kept POST's real wait here (its whole timeout passes on the fake clock)


def _killed(**_: Any) -> None:
    raise LambdaKilled("the publisher was killed at its PutEvents")


class StatusOutSteps(RuleBasedStateMachine):
    """Rules over ``self.status_out``. The machine they are mixed into provides ``_step()`` (a
    step counted, its invariants pending), ``clock`` and ``advance_clock(seconds)`` (time passes
    with SES's Send events emitted on time), and calls ``start_status_out`` and, at the end,
    ``settle_status_out``."""

    status_out: StatusOutWorld

    def start_status_out(self, world: StatusOutWorld, advance: Any) -> None:
        self.status_out = world
        world.fresh()
        world.endpoint.real_wait, world.endpoint.advance = REAL_WAIT_SECONDS, advance

    # --- the publisher --------------------------------------------------------------------------
    @rule(size=st.sampled_from([1, 3, 100]))
    def publish_batch(self, size: int) -> None:
        self._step()  # type: ignore[attr-defined]
        if self.status_out.stream.invoke(limit=size):
            FIGURES["stateful_publisher_batches"] += 1

    @rule(code=st.sampled_from(["ThrottlingException", "InternalFailure"]), call=st.integers(1, 3))
    def publish_with_refused_entries(self, code: str, call: int) -> None:
        """PutEvents answers 200 with the entries of its `call`-th call refused: handed back, put again."""
        self._step()  # type: ignore[attr-defined]
        fault = Fault(PUT, "send", put_events_partly_failing(every(code)), call=call)
        with self.status_out.bus.armed(fault):
            self.status_out.stream.invoke()
        FIGURES["stateful_put_entries_refused"] += int(bool(fault.fired))

    @rule(call=st.integers(1, 4), after=st.booleans())
    def publisher_killed(self, call: int, after: bool) -> None:
        """Killed before its `call`-th PutEvents is sent, or once it was put: the batch comes back."""
        self._step()  # type: ignore[attr-defined]
        fault = Fault(PUT, "after" if after else "send", _killed, call=call)
        with self.status_out.bus.armed(fault):
            self.status_out.stream.invoke()
        FIGURES["stateful_publisher_kills"] += int(bool(fault.fired))

    @rule()
    def stream_batch_redelivered(self) -> None:
        """At least once: the last batch handed to the publisher comes again; same ids."""
        self._step()  # type: ignore[attr-defined]
        if self.status_out.stream.redeliver_last():
            self.status_out.stream.invoke()
            FIGURES["stateful_stream_redeliveries"] += 1

    # --- the callbacks ----------------------------------------------------------------------------
    @precondition(lambda self: queue_depth(self.status_out.resources.callback_queue_url) > 0)
    @rule(mode=st.sampled_from(RECEIVER_MODES))
    def deliver_callbacks(self, mode: str) -> None:
        self._step()  # type: ignore[attr-defined]
        self.status_out.receiver.plan = r.always(mode)
        try:
            if self.status_out.callbacks.invoke():
                FIGURES["stateful_callback_batches"] += 1
                FIGURES["stateful_callbacks_failed"] += int(mode != r.OK)
        finally:
            self.status_out.receiver.plan = r.always(r.OK)

    @precondition(lambda self: queue_depth(self.status_out.resources.callback_queue_url) > 0)
    @rule()
    def callbacks_killed_after_post(self) -> None:
        """The receiver answered 2xx, the function died before its response: nothing deleted."""
        self._step()  # type: ignore[attr-defined]
        self.status_out.endpoint.kill_after_posts = 1
        try:
            self.status_out.callbacks.invoke()
            FIGURES["stateful_callbacks_killed_after_post"] += int(self.status_out.endpoint.kill_after_posts == 0)
        finally:
            self.status_out.endpoint.kill_after_posts = 0

    @precondition(lambda self: queue_depth(self.status_out.resources.callback_queue_url) > 0)
    @rule()
    def callback_retries_expire(self) -> None:
        """Time passes to the next callback's retry (its backoff delay, or the queue's visibility)."""
        visible = self.status_out.callbacks.next_visible()
        if visible is None:
            return
        seconds = int((visible - self.clock.now()).total_seconds()) + 1  # type: ignore[attr-defined]
        if seconds > 1:
            self.advance_clock(seconds)  # type: ignore[attr-defined]
            FIGURES["stateful_callback_retries_expired"] += 1

    @rule(mode=st.sampled_from([r.FAIL, r.RESET, r.SLOW, r.BLACKHOLE]))
    def callback_fails_then_its_retry_comes_due(self, mode: str) -> None:
        """The hard path as one rule, so that most runs reach it: what the ledger committed is
        published, a callback fails, time passes to its retry, and the retry is delivered."""
        self._step()  # type: ignore[attr-defined]
        self.status_out.stream.drain()
        if queue_depth(self.status_out.resources.callback_queue_url) == 0:
            return
        self.deliver_callbacks(mode)
        self.callback_retries_expire()
        self.deliver_callbacks(r.OK)

    # --- invariants -------------------------------------------------------------------------------
    @invariant()
    def status_out_holds_only_what_the_ledger_holds(self) -> None:
        world = self.status_out
        ledger = world.ledger_events()
        on_bus = {body["detail"]["event_id"] for body in world.bus_events_since_last()}
        assert on_bus <= set(ledger), f"published but not in the ledger: {sorted(on_bus - set(ledger))}"
        assert set(world.receiver.processed()) <= set(ledger), "a callback for a change the ledger does not hold"
        assert not world.receiver.invalid(), "a callback the receiver could not verify"

    def settle_status_out(self) -> None:
        """Faults gone: the stream drains, every callback is delivered or dead-lettered, all is checked."""
        self.status_out.recover()
        seen = self.status_out.check(changes_expected=False)  # an example may commit nothing
        FIGURES["stateful_callbacks_dead_lettered"] += seen["dead_lettered"]
