"""The status-out leg under faults: ledger stream → publisher → bus → rule → SQS → callbacks → receiver.

Faults sit where the rest of the suite puts them: botocore hooks on the publisher's real
EventBridge client (``PutEvents`` answering 200 with failed entries in the real answer's shape,
the whole call failing, throttling), the request killer for a publisher killed mid-batch, and
a real HTTP receiver for the callbacks (5xx, timeouts, resets, no answer). Lambda's event
sources are emulated as documented (tests/reliability/event_sources.py); time is the fake
clock, which moto's SQS follows.

The invariants, from the ledger and two observers the product does not control:
- every state change the ledger's stream holds is on the bus at least once with its event_id
  (the bus observer is a second rule's SQS queue, read at the end), unless its record went to
  the publisher's on-failure destination;
- nothing is on the bus, or reaches the receiver, that the ledger does not hold, and one id is
  always one change;
- every event on the bus that a caller owns (a message's) reached that caller's receiver with a
  signature it verified itself, or waits in the callback DLQ; an event nobody owns (a suppression
  change) reached no receiver; the callback queue is empty at the end.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSResponse
from moto.core import DEFAULT_ACCOUNT_ID
from moto.events.models import events_backends

from infra.settings import Settings as DeploySettings
from local.status_out import create_status_out_resources
from sendledger import bootstrap
from sendledger.adapters.callback_queue import SqsCallbackQueue
from sendledger.adapters.callbacks_http import UrllibEndpoint
from sendledger.adapters.dynamodb.stream import LedgerStream
from sendledger.domain.state_changes import StatusEvent
from sendledger.handlers import callbacks, publisher
from tests.conftest import TABLE
from tests.integration.conftest import ses_record
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.event_sources import (
    REGION,
    SqsEventSource,
    StreamEventSource,
    empty_queue,
    given_up,
    queue_bodies,
    sqs_on,
)
from tests.reliability.faults import FIGURES, Hooks, answer_locally, scan
from tests.reliability.killer import LambdaKilled
from tests.reliability.status_events import STREAM, Snapshot, TapReader, change_of
from tests.support.fakes import ADMIN, CALLER
from tests.support.receiver import Receiver, always
from tests.support.status_out import register_receiver

BUS = "sendledger-faults"
SECRET = "local-callback-secret"
DEPLOYED = DeploySettings()  # the deployed callback budget: batch, function timeout, queue visibility
REAL_WAIT_SECONDS = 0.1  # how long a POST really waits here for a receiver that keeps it (see TimedEndpoint)


# --- PutEvents at the wire -------------------------------------------------------------------
ENTRY_ERRORS = {
    "ThrottlingException": "Request rate exceeded.",
    "InternalFailure": "An internal error occurred while processing the request.",
}
_JSON_11 = {"Content-Type": "application/x-amz-json-1.1"}


def put_events_partly_failing(fails: Callable[[int, dict[str, Any]], str | None]) -> Callable[[Any], AWSResponse]:
    """HTTP 200 with FailedEntryCount > 0: the entries `fails` names an ErrorCode for are refused,
    the others are put on the bus (by moto's backend, rules and targets included), and the
    answer lists them in order, as EventBridge answers."""

    def make(request: Any) -> AWSResponse:
        entries = json.loads(request.body)["Entries"]
        backend = events_backends[DEFAULT_ACCOUNT_ID][REGION]
        answers = []
        for index, entry in enumerate(entries):
            code = fails(index, entry)
            answers.append(
                {"ErrorCode": code, "ErrorMessage": ENTRY_ERRORS[code]} if code else backend.put_events([entry])[0]
            )
        failed = sum("ErrorCode" in a for a in answers)
        FIGURES["status_out_entries_refused"] += failed
        headers = {**_JSON_11, "x-amzn-RequestId": f"fault-{uuid.uuid4()}"}
        return answer_locally(request, 200, headers, {"FailedEntryCount": failed, "Entries": answers})

    return make


def every(code: str, nth: int = 1, offset: int = 0) -> Callable[[int, dict[str, Any]], str | None]:
    return lambda index, _entry: code if index % nth == offset else None


def put_events_error(code: str, status: int) -> Callable[[Any], AWSResponse]:
    """The whole call refused (nothing put): a JSON-1.1 error answer."""

    def make(request: Any) -> AWSResponse:
        headers = {**_JSON_11, "x-amzn-RequestId": f"fault-{uuid.uuid4()}"}
        return answer_locally(request, status, headers, {"__type": code, "message": f"injected {code}"})

    return make


# --- the callbacks' HTTP on the fake clock ---------------------------------------------------------
@dataclass
class TimedEndpoint:
    """The real UrllibEndpoint, its waits on the fake clock: a POST that got no answer because
    the receiver kept it took its whole timeout (the fake clock moves by it; really it waits
    REAL_WAIT_SECONDS); any other answer took what it really took. The function dies at its
    timeout (the event source's deadline), and ``kill_after_posts`` kills it right after that
    many answered POSTs (the message is then not deleted)."""

    clock: Any
    real_wait: float = REAL_WAIT_SECONDS
    advance: Callable[[float], None] | None = None  # how time passes (default: the clock's own advance)
    endpoint: UrllibEndpoint = field(default_factory=UrllibEndpoint)
    source: SqsEventSource | None = None
    kill_after_posts: int = 0
    posts: int = 0
    timeouts: int = 0
    unanswered: int = 0  # no status within the POST's deadline: kept, or cut short by it

    def post(
        self, url: Any, addresses: Any, body: bytes, headers: dict[str, str], timeout_seconds: float
    ) -> int | None:
        started = time.monotonic()
        status = self.endpoint.post(url, addresses, body, headers, min(timeout_seconds, self.real_wait))
        waited = time.monotonic() - started
        self.posts += 1
        kept = status is None and waited >= self.real_wait * 0.9
        self.timeouts += kept
        self.unanswered += status is None
        (self.advance or self.clock.advance)(timeout_seconds if kept else waited)
        if self.source is not None:
            self.source.check_deadline()
        if status is not None and 200 <= status < 300 and self.kill_after_posts > 0:
            self.kill_after_posts -= 1
            FIGURES["status_out_callbacks_killed_after_post"] += 1
            raise LambdaKilled("killed after the receiver answered, before the batch response")
        return status


# --- the world -----------------------------------------------------------------------------------
class _LazyScan:
    """The table as the ledger watch reads it, scanned on the first read only (most records need none)."""

    def __init__(self) -> None:
        self.snapshot: Snapshot | None = None

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        self.snapshot = self.snapshot or Snapshot(scan())
        return self.snapshot.get(pk, sk)


@dataclass
class Replay:
    """Records already read from the stream, handed out once more (as a TapReader hands them)."""

    records: list[dict[str, Any]]

    def take(self) -> list[dict[str, Any]]:
        taken, self.records = self.records, []
        return taken


PEOPLE = ("bounce@simulator.amazonses.com", "erin@example.com", "frank@example.com")


class StatusOutWorld:
    """The shared world plus the status-out resources, functions, event sources and observers."""

    def __init__(self, shared: SharedWorld, *, settings: DeploySettings = DEPLOYED) -> None:
        self.shared, self.clock, self.deployed = shared, shared.clock, settings
        SqsCallbackQueue.of_queue.cache_clear()
        self.resources = create_status_out_resources(
            table_name=TABLE,
            bus_name=BUS,
            max_attempts=settings.callback_max_attempts,
            region=REGION,
            callback_visibility_seconds=settings.callback_queue_visibility_seconds,
        )
        self.receiver = Receiver(SECRET, slow_seconds=3 * REAL_WAIT_SECONDS)
        self.endpoint = TimedEndpoint(self.clock)
        runtime_settings = shared.services.settings.replace(
            {
                "event_bus_name": BUS,
                "callback_allow_loopback": True,  # the receiver listens on loopback, as locally
                "callback_retry_base_seconds": settings.callback_retry_base_seconds,
                "callback_max_attempts": settings.callback_max_attempts,
                "callback_timeout_seconds": settings.callback_timeout_seconds,
            }
        )
        self.runtime = bootstrap.build_status_out(runtime_settings)
        self.runtime.clock, self.runtime.receivers.endpoint = self.clock, self.endpoint
        self.bus = Hooks("events", [self.runtime.bus.client.meta.events])  # type: ignore[attr-defined]
        self.fresh()

    def close(self) -> None:
        self.bus.close()
        self.receiver.close()
        SqsCallbackQueue.of_queue.cache_clear()

    def fresh(self) -> None:
        """New readers of the stream and empty queues: what follows is one schedule's run."""
        # The sends' caller has the receiver (the shared world's fresh() emptied the table)
        register_receiver(self.runtime.settings, CALLER, self.receiver.url, SECRET)
        for url in (
            self.resources.events_queue_url,
            self.resources.callback_queue_url,
            self.resources.callback_dlq_url,
        ):
            empty_queue(url)
        self.truth: TapReader | Replay = STREAM.reader()
        self.seen_records: list[dict[str, Any]] = []
        self.bus_read = 0  # messages of the bus observer's queue already looked at
        self.found: dict[str, tuple[StatusEvent, str]] = {}
        self.stream = self._stream_source(STREAM.reader())
        self.callbacks = SqsEventSource(
            self.resources.callback_queue_url,
            self.resources.callback_queue_arn,
            lambda event, context: callbacks.lambda_handler(event, context, self.runtime),
            self.clock,
            batch_size=10,
            function_timeout_seconds=self.deployed.callbacks_timeout_seconds,
        )
        self.endpoint.source, self.endpoint.kill_after_posts = self.callbacks, 0
        self.receiver.plan = always("ok")
        self.receiver.forget()
        self.bus.disarm()
        self.bus.requests.clear()

    def replay(self) -> None:
        """The same committed records once more, to a new mapping, with empty observers: a
        schedule over the stream without committing its history again."""
        records = [*self.seen_records, *self.truth.take()]
        self.fresh()
        self.truth = Replay(records)
        self.stream = self._stream_source(Replay(records))

    def _stream_source(self, reader: TapReader | Replay) -> StreamEventSource:
        return StreamEventSource(
            reader,  # type: ignore[arg-type]
            lambda event, context: publisher.lambda_handler(event, context, self.runtime),
            self.resources.stream_arn,
        )

    # --- driving -------------------------------------------------------------------------------
    def make_history(self) -> None:
        """Sends, their SES events, an admin act: every item family the publisher reads."""
        tag = uuid.uuid4().hex[:8]
        for n, to in enumerate(PEOPLE):
            body = {
                "channel": "email",
                "to": to,
                "template": {"id": "alert", "version": "1"},
                "params": {"summary": "s"},
            }
            answer = self.shared.client("POST", "/v1/messages", body, headers={"Idempotency-Key": f"{tag}-{n}"})
            assert answer.status == 202, answer
            view = answer.body
            self.clock.advance(1)
            pmid = view["provider_message_id"]
            self.shared.ingestion.publish(ses_record("Send", view["message_id"], to, self.clock.now(), pmid))
            kind = "Bounce" if to.startswith("bounce") else "Delivery"
            self.shared.ingestion.publish(ses_record(kind, view["message_id"], to, self.clock.now(), pmid))
        self.shared.poll()
        path = f"/v1/admin/suppressions/{tag}%40example.com"
        assert self.shared.client("PUT", path, {"reason": "asked"}, principal=ADMIN).status == 200

    def deliver(self) -> None:
        """The callbacks run until their queue is empty: delivered, or in the DLQ after backoff."""
        self.callbacks.run()

    def recover(self) -> None:
        """Faults gone: the stream drains and every callback is delivered or dead-lettered."""
        self.bus.disarm()
        self.endpoint.kill_after_posts = 0
        self.stream.drain()
        self.deliver()

    # --- the invariants ---------------------------------------------------------------------------
    def ledger_events(self) -> dict[str, tuple[StatusEvent, str]]:
        """Every change the ledger's stream holds for this run: event id → (event, its record's sequence).

        Read as the watch reads them (tests/reliability/status_events.py): a receipt's change is
        completed from its message item, in one scan taken once per batch of new records.
        """
        fresh = self.truth.take()
        self.seen_records += fresh
        if fresh:
            reading = LedgerStream(_LazyScan())  # type: ignore[arg-type]
            for record in fresh:
                for event in reading.events_of(record):
                    self.found.setdefault(event.event_id, (event, record["dynamodb"]["SequenceNumber"]))
        return self.found

    def bus_events_since_last(self) -> list[dict[str, Any]]:
        """What reached the bus observer's queue since the last look (nothing consumes it meanwhile)."""
        bodies = queue_bodies(self.resources.events_queue_url, start=self.bus_read)
        self.bus_read += len(bodies)
        return bodies

    def check(self, *, changes_expected: bool = True) -> Counter[str]:
        ledger = self.ledger_events()
        assert ledger or not changes_expected, "the run committed no state change: nothing was tested"
        bus = [body["detail"] for body in queue_bodies(self.resources.events_queue_url)]
        on_bus = {detail["event_id"] for detail in bus}
        # Nothing published that the ledger does not hold, and one id is one change
        assert on_bus <= set(ledger), f"published but not in the ledger: {sorted(on_bus - set(ledger))}"
        for detail in bus:
            assert change_of(detail) == change_of(ledger[detail["event_id"]][0].detail), detail
        # Every change on the bus at least once, or its record given up to the on-failure destination
        abandoned = given_up(self.stream)
        lost = {i for i, (_, sequence) in ledger.items() if i not in on_bus and sequence not in abandoned}
        assert not lost, f"state changes never published: {sorted(lost)}"
        # Every owned event on the bus reached its owner's receiver, verified, or waits in the
        # callback DLQ; nobody's event (a suppression change) reached no receiver
        processed = self.receiver.processed()
        dead = {body["detail"]["event_id"] for body in queue_bodies(self.resources.callback_dlq_url)}
        assert not self.receiver.invalid(), f"requests with a bad signature: {self.receiver.invalid()[:1]}"
        assert set(processed) <= set(ledger), "a callback for a change the ledger does not hold"
        owned = {detail["event_id"] for detail in bus if detail.get("caller_id") == CALLER}
        nobodys = {detail["event_id"] for detail in bus if detail.get("caller_id") is None}
        assert not nobodys & {got.event_id for got in self.receiver.requests}, "nobody's event was POSTed"
        assert on_bus == owned | nobodys, "an event owned by a caller without a receiver"
        undelivered = owned - set(processed) - dead
        assert not undelivered, f"callbacks neither received nor dead-lettered: {sorted(undelivered)}"
        assert not queue_bodies(self.resources.callback_queue_url), "callbacks still queued after recovery"
        for event_id, gots in processed.items():  # a duplicate is the same change: the receiver may drop it by id
            assert len({json.dumps(change_of(json.loads(g.body)["data"]), sort_keys=True) for g in gots}) == 1
        seen = Counter(
            ledger=len(ledger),
            bus=len(bus),
            duplicates_on_bus=len(bus) - len(on_bus),
            received=len(processed),
            duplicate_callbacks=sum(len(g) - 1 for g in processed.values()),
            dead_lettered=len(dead),
            given_up=len({i for i, (_, s) in ledger.items() if s in abandoned}),
        )
        FIGURES["status_out_checks"] += 1
        FIGURES["status_out_duplicates_on_bus"] += seen["duplicates_on_bus"]
        FIGURES["status_out_duplicate_callbacks"] += seen["duplicate_callbacks"]
        FIGURES["status_out_dead_lettered"] += seen["dead_lettered"]
        return seen


@contextmanager
def status_out_world() -> Iterator[StatusOutWorld]:
    """A module's status-out world: the shared world, moto's SQS on its fake clock."""
    with shared_world() as shared, sqs_on(shared.clock):
        world = StatusOutWorld(shared)
        try:
            yield world
        finally:
            world.close()
