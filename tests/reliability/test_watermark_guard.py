"""The watermark is evidence, so it must only move when it is true.

Absence of an event counts as proof that a timed-out send never reached SES only once the SES
watermark has passed send time + UNKNOWN_GRACE_SECONDS, and the watermark is the start of a
poll cycle that drained the queue with nothing left behind. If a cycle that failed to apply an
event (it stays in the queue for the next cycle) still moved the watermark, the event proving
acceptance would count as absent and the poller would send the same intent a second time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import Fault, dynamodb_error, emails_to, items_with, merged_state, message_id_of

GRACE_SECONDS = 900  # UNKNOWN_GRACE_SECONDS of the shared world's settings
LEASE_SECONDS = 60


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedWorld]:
    with shared_world() as world:
        yield world


def event_writes_fail(request: Any) -> Any:
    """The write that applies a delivery event (it adds an event's `h:e.` entry) is refused;
    every other request goes through."""
    if b'"h:e.' in (request.body or b""):
        return dynamodb_error("ProvisionedThroughputExceededException")(request)
    return None


def message_state(world: SharedWorld, message_id: str) -> str:
    [message] = [m for m in items_with(world.watch.check(), "MSG#", "MSG") if message_id_of(m) == message_id]
    return merged_state(world.watch.check(), str(message_id_of(message)))


def accepted_but_timed_out(world: SharedWorld, prefix: str) -> tuple[str, str]:
    """A fresh world and one send SES accepted while the caller saw a timeout: (address, message id)."""
    world.fresh()
    to = f"{prefix}-{uuid.uuid4().hex[:8]}+timeout-accepted@example.com"
    answer = world.client(
        "POST",
        "/v1/messages",
        {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}},
        headers={"Idempotency-Key": f"{prefix}-{uuid.uuid4().hex}"},
    )
    assert answer.status == 202 and answer.body["state"] == "unknown", answer
    return to, str(answer.body["message_id"])


def test_events_left_in_the_queue_hold_the_watermark_back_so_no_blind_resend(shared: SharedWorld) -> None:
    # Given a send SES accepted while the caller saw a timeout (`unknown`), its events queued
    to, message_id = accepted_but_timed_out(shared, "watermark")
    shared.simulator.flush()
    # When the poller cannot apply those events for longer than the grace (they stay queued)
    event_writes = Fault("UpdateItem", "send", event_writes_fail, call=None, key_prefix="MSG#")
    with shared.dynamo.armed(event_writes):
        shared.poll()
        shared.clock.advance(GRACE_SECONDS + LEASE_SECONDS)
        shared.poll()
    # Then the absence of evidence is not taken as proof: no second send, still `unknown`
    assert event_writes.fired >= 2, "the event writes were never attempted"
    assert len(emails_to(to)) == 1, "sent again while the evidence of acceptance sat in the queue"
    assert message_state(shared, message_id) == "unknown"
    # And once the events apply, the same message is delivered, still sent once
    shared.poll()
    assert message_state(shared, message_id) == "delivered"
    assert len(emails_to(to)) == 1


def test_a_watermark_newer_than_the_send_but_not_past_the_grace_proves_nothing(shared: SharedWorld) -> None:
    # Given a send SES accepted while the caller saw a timeout; SES has not emitted its events yet
    to, message_id = accepted_but_timed_out(shared, "grace")
    # And one cycle drained the (still empty) queue a minute after the send: the watermark is
    # past the send time, but not past send time + UNKNOWN_GRACE_SECONDS
    shared.clock.advance(LEASE_SECONDS)
    shared.poll()
    # When the queue stops draining to empty (an unreadable message stays for the DLQ) and the
    # poller reaches the unknown send after the grace
    boto3.client("sqs").send_message(QueueUrl=shared.ingestion.queue_url, MessageBody="not an SNS envelope")
    shared.clock.advance(GRACE_SECONDS + LEASE_SECONDS)
    shared.poll()
    # Then the watermark proves no absence: no second send, still unknown
    assert len(emails_to(to)) == 1, "sent again on a watermark that had not passed the grace"
    assert message_state(shared, message_id) == "unknown"
    # And once SES's events arrive and the queue drains, the one send is delivered
    shared.drain_queue()
    shared.simulator.flush()
    shared.poll()
    assert message_state(shared, message_id) == "delivered" and len(emails_to(to)) == 1
