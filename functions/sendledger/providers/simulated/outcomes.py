"""Test mode's own event path, as ingestion reads it: the test outcomes queue's lane.

Every body is an envelope, `{"carrier": <registry name>, "body": <the event as its carrier's real
path carries it>}` (outlets.py writes them). The body is read by that carrier's own parser (its
slice's simulation), so a simulated bounce means what a real one means; then every event must name a test caller (its
provider message id is a simulated one, domain/test_mode.py) and, where it names a message, carry
that message's seal (only the deployment's key makes one); else the whole body is refused and left
for the dead-letter queue: whoever can write this queue can touch test namespaces and test messages only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from sendledger.domain import test_mode
from sendledger.domain.events import DeliveryEvent, MalformedEvent, json_object

if TYPE_CHECKING:
    from sendledger.ports.providers import Simulation
    from sendledger.settings import Settings
    from sendledger.usecases.queued_events import QueueLane

LANE = "test-outcomes"
SOURCE = "test-mode"  # no provider's watermark moves by it


def envelope(carrier: str, body: str) -> str:
    return json.dumps({"carrier": carrier, "body": body})


def parse_test_outcome(raw: str, simulation_of: Callable[[str], Simulation]) -> list[DeliveryEvent]:
    """The events of one envelope; MalformedEvent for anything not a test caller's simulated event."""
    document = json_object(raw, "test outcome")
    body = document.get("body")
    try:
        simulation = simulation_of(str(document.get("carrier")))
    except KeyError:  # no registered provider of that name
        raise MalformedEvent(f"not a test outcome: unknown carrier {document.get('carrier')!r}") from None
    if not isinstance(body, str):
        raise MalformedEvent("not a test outcome: its body is not a string")
    events = simulation.parse(body)
    for event in events:
        if test_mode.caller_of(event.provider_message_id) is None:
            raise MalformedEvent(
                f"a test outcome must name a test caller's simulated send (provider message id "
                f"{event.provider_message_id!r}): refused, real recipients are not touched from here"
            )
        if event.message_id is not None and not test_mode.seals(event.provider_message_id, event.message_id):
            raise MalformedEvent(
                f"a test outcome naming message {event.message_id!r} must carry that message's seal in its "
                "provider message id: refused, real messages are not touched from here"
            )
    return events


def test_outcomes_lane(settings: Settings, simulation_of: Callable[[str], Simulation]) -> QueueLane | None:
    """The poller's lane of the test outcomes queue (none where the deployment has no such queue)."""
    from sendledger.adapters.sqs import SqsEventQueue
    from sendledger.usecases.queued_events import QueueLane

    url = settings.test_outcomes_queue_url
    if not url:
        return None
    # A side path: it never proves a provider's absence, so no watermark moves by it.
    parse = partial(parse_test_outcome, simulation_of=simulation_of)
    return QueueLane(LANE, SOURCE, SqsEventQueue(url), parse, completes_source=False)
