"""In-memory implementations of the ports, with the DynamoDB adapter's conditional semantics.

Use cases run against them in milliseconds, without moto; tests/integration/test_store_contract.py
runs the same scenarios against these and the DynamoDB stores and compares the results. Nothing
here imports boto3, botocore or moto (tests/unit/test_architecture.py checks).
"""

from tests.unit.fakes.ledger import FakeLedger
from tests.unit.fakes.queues import FakeEscalationQueue, FakeEventQueue, FakeLogReader
from tests.unit.fakes.senders import (
    ACCEPTED,
    REJECTED,
    THROTTLED,
    TIMEOUT_LOST,
    TIMEOUT_REACHED,
    UNAVAILABLE,
    FakeEmailSender,
    FakeSmsSender,
    Reply,
)
from tests.unit.fakes.world import FakeWorld, build_runtime, fake_lanes, fake_world

__all__ = [
    "ACCEPTED",
    "REJECTED",
    "THROTTLED",
    "TIMEOUT_LOST",
    "TIMEOUT_REACHED",
    "UNAVAILABLE",
    "FakeEmailSender",
    "FakeEscalationQueue",
    "FakeEventQueue",
    "FakeLedger",
    "FakeLogReader",
    "FakeSmsSender",
    "FakeWorld",
    "Reply",
    "build_runtime",
    "fake_lanes",
    "fake_world",
]
