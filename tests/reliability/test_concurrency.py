"""Concurrent clients against ONE moto server: the same intent is sent once, one token per
account, and delivery events for one recipient converge.

Each thread plays one Lambda container: its own copy of the ``api`` handler module (the
Powertools resolver keeps the current event on the app object, which a container never shares)
and its own ledger connection, all talking HTTP to one ``ThreadedMotoServer``.

moto applies a TransactWriteItems as "check and write item by item, restore a deep copy of the
table on failure", which under concurrent requests can erase another request's writes. Real
DynamoDB serializes transactions; the server here serializes requests (one at a time) so that
what is tested is the product's interleavings between requests, not moto's lack of isolation.

The assertions hold for EVERY interleaving of the threads, not for a particular winner: never
two accepted sends for one intent, no intent lost, every delivery event applied at most once
(exactly once after the final poll), a message's state only moves forward along the lifecycle,
at most one valid reset token per account, history append-only. They are checked by one watcher
for the whole module (``World``), which looks at the table between every two requests the server
applies — before, during and after each race, and across tests — so an entry that changes or
disappears between any two requests is caught. Every test ends by running the poller until it
is quiescent (the fake clock moved past leases and ``UNKNOWN_GRACE_SECONDS`` when work waits
for time) and checking again.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import threading
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import boto3
import pytest
import requests

from local.moto_server import SerializedMotoServer
from local.ports import free_ports
from sendledger import bootstrap
from sendledger.adapters import aws as aws_clients
from sendledger.adapters.dynamodb.keys import reset_key_parts, reset_pk
from sendledger.adapters.dynamodb.ledger import LedgerTable
from sendledger.adapters.dynamodb.schema import create_ledger_table
from sendledger.bootstrap import Runtime
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.messages import MessageState
from sendledger.domain.provider import Backoff
from sendledger.handlers import api as api_module
from sendledger.handlers import api_routes
from sendledger.providers.ses.events import parse_sqs_body
from sendledger.providers.ses.sender import SesEmailSender
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.sns.sender import SnsSmsSender
from sendledger.settings import Settings
from sendledger.usecases.ingest import IngestReport
from sendledger.usecases.intents import LEASE_SECONDS
from sendledger.usecases.poll import CycleFailed
from tests.conftest import SENDER, TABLE
from tests.integration.conftest import ses_record
from tests.reliability.conftest import make_ingestion
from tests.reliability.faults import (
    FIGURES,
    PROBLEM_JSON,
    Answer,
    Fault,
    Hooks,
    LedgerWatch,
    connect_timeout,
    emails_to,
    history_of,
    items_with,
    mailed_tokens,
    merged_state,
    message_id_of,
    s,
    scan,
    valid_tokens,
)
from tests.support.fakes import CALLER, FakeClock, FakeLambdaContext, FakeSleeper, api_event
from tests.support.fixtures import ingest_sqs_body, put_watermark
from tests.support.outbox import sent_emails

THREADS = 8
APPLY_DELIVERIES = 5  # SQS deliveries of one event message within a race; then it waits for the next poll
SETTLE_MAX_CYCLES = 20  # poll cycles the final settle may take before "not quiescent" is a failure
# States that still wait for the poller or a worker (a quiescent ledger has none of them).
AWAITING_WORK = frozenset(
    state.value
    for state in (
        MessageState.RECEIVED,
        MessageState.SENDING,
        MessageState.UNKNOWN,
        MessageState.PENDING,
        MessageState.RETRY,
    )
)


@pytest.fixture(scope="module")
def moto_server() -> Iterator[SerializedMotoServer]:
    (port,) = free_ports(1)
    server = SerializedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    url = f"http://127.0.0.1:{port}"
    saved = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = url
    try:
        aws_clients.client.cache_clear()
        create_ledger_table(boto3.client("dynamodb"), TABLE)
        boto3.client("ses").verify_email_identity(EmailAddress=SENDER)
        boto3.client("sesv2").create_configuration_set(ConfigurationSetName="sendledger-events")
        yield server
    finally:
        server.between_requests = lambda: None
        requests.post(f"{url}/moto-api/reset", timeout=5)
        server.stop()
        if saved is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = saved
        aws_clients.client.cache_clear()  # later tests (mock_aws) get fresh clients without the endpoint


# --- the one watcher of the module ----------------------------------------------------------
@dataclass(eq=False, repr=False)
class World:
    """The module's table, clock and ONE LedgerWatch, checked between every two requests.

    The same watch sees every check of the whole module (setup, every race, every settle, every
    test), so "history is append-only" compares each state with the one before it. A violation
    seen between two requests is kept (the server thread must not raise) and fails the next
    ``assert_no_violations``; checks pause until then, the first violation being the one to read.
    Once reported, the watch starts again from the table as it is, so the same change is not
    reported again by every later test (damage that stays in the table still fails them).
    """

    server: SerializedMotoServer
    clock: FakeClock = field(default_factory=FakeClock)
    watch: LedgerWatch = field(default_factory=LedgerWatch)
    violations: list[str] = field(default_factory=list)

    def check(self) -> list[dict[str, Any]]:
        """Every invariant, on the table as it is between two requests; returns the items."""
        with self.server.lock:
            items = self.watch.check()
            self._observe(items)
            return items

    def between_requests(self) -> None:
        if self.violations:
            return
        FIGURES["concurrency_checks_between_requests"] += 1
        try:
            self.check()
        except AssertionError as failure:
            self.violations.append(f"between two requests: {failure}")
        except Exception as failure:  # the check itself broke: as loud as a violation
            self.violations.append(f"between two requests, the check raised {failure!r}")

    def __repr__(self) -> str:
        return f"World(observations={self.watch.observations}, violations={len(self.violations)})"

    def assert_no_violations(self) -> None:
        if not self.violations:
            return
        first = self.violations[0]
        with self.server.lock:
            self.violations = []
            self.watch = LedgerWatch()
            with contextlib.suppress(AssertionError):  # a damage that persists fails the next check anyway
                self.check()
        pytest.fail(first)

    def snapshot(self) -> dict[tuple[str, str], dict[str, Any]]:
        with self.server.lock:
            return {(s(i, "pk"), s(i, "sk")): i for i in scan()}

    def _observe(self, items: list[dict[str, Any]]) -> None:
        """What the LedgerWatch cannot judge alone in a shared world (it forgets nothing across tests)."""
        messages = {s(m, "pk"): m for m in items_with(items, "MSG#", "MSG")}
        # Never two accepted sends for one intent: no more mails to an address than intents for it.
        intents = Counter(s(m, "recipient") for m in messages.values())
        mails = Counter(a for mail in sent_emails() for a in mail.destinations.get("ToAddresses") or [])
        for address, count in intents.items():
            assert mails[address] <= count, f"{mails[address]} mails accepted for {count} intent(s) to {address}"
        # At most one valid reset token per account.
        now = iso(self.clock.now())
        for reset in items_with(items, "RESET#"):
            owner, account = reset_key_parts(s(reset, "pk"))
            message = messages.get(f"MSG#{s(reset, 'message_id')}")
            if message is None:
                continue  # a reset without its message: the LedgerWatch fails that
            valid = valid_tokens(account, mailed_tokens(s(message, "recipient")), items, now, owner)
            assert len(valid) <= 1, f"{len(valid)} valid tokens for account {account}"


@pytest.fixture(scope="module")
def world(moto_server: SerializedMotoServer) -> Iterator[World]:
    world = World(moto_server)
    world.check()
    moto_server.between_requests = world.between_requests
    try:
        yield world
    finally:
        moto_server.between_requests = lambda: None


def _handler_copy(index: int) -> ModuleType:
    """A fresh import of the api handler module and of its router: one resolver per simulated container."""
    module, routes = (
        _fresh(m, f"sendledger_{m.__name__.rsplit('.', 1)[-1]}_{index}") for m in (api_module, api_routes)
    )
    module.routes = lambda: routes
    return module


def _fresh(original: ModuleType, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, original.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pipeline_settings(world: World) -> Settings:
    """The SES events queue, topic and log groups on the server; the settings that name them."""
    services = Runtime.over(
        LedgerTable.named(TABLE, world.clock),
        email=SesEmailSender(SENDER, "sendledger-events"),
        sms=SnsSmsSender(),
        clock=world.clock,
        settings=Settings(table_name=TABLE, sender_email=SENDER, poll_interval_seconds=60),
    )
    make_ingestion(services)
    return services.settings


@pytest.fixture(scope="module")
def containers(world: World) -> list[ModuleType]:
    modules = [_handler_copy(i) for i in range(THREADS)]
    for module in modules:  # each container has its own ledger connection (built once: ~0.1 s each)
        module.ledger = LedgerTable.named(TABLE, world.clock)  # its client is built now, not in the threads
    return modules


def awaiting_work(items: Iterable[dict[str, Any]]) -> list[str]:
    """Messages a quiescent ledger would not have: still waiting for the poller or a worker."""
    return [f"{s(i, 'pk')}: {s(i, 'state')}" for i in items if s(i, "sk") == "MSG" and s(i, "state") in AWAITING_WORK]


class Fleet:
    """THREADS containers sharing the world's clock and ledger; the composition root answers per thread."""

    def __init__(
        self, world: World, containers: list[ModuleType], settings: Settings, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.world = world
        self.containers = containers
        self.clock = world.clock
        self.settings = settings
        self.local = threading.local()
        self.main = self._services(containers[0])
        self.sqs = aws_clients.client("sqs")  # built here: clients are shared by threads, not created in them
        self.acknowledged: set[str] = set()  # every message id an answer named
        monkeypatch.setattr(bootstrap, "runtime", self._runtime)
        for source in ("ses", "sms"):
            put_watermark(TABLE, source, self.clock.now())

    def _runtime(self) -> bootstrap.Runtime:
        runtime: bootstrap.Runtime = getattr(self.local, "services", self.main)
        return runtime

    def _services(self, container: ModuleType) -> Runtime:
        return Runtime.over(
            container.ledger,
            email=SesEmailSender(SENDER, "sendledger-events"),
            sms=SnsSmsSender(),
            clock=self.clock,
            settings=self.settings,
            sleep=FakeSleeper(clock=None),
            backoff=Backoff(rng=lambda: 0.5),
        )

    def call(self, container: ModuleType, method: str, path: str, body: Any = None, **kwargs: Any) -> Answer:
        """One invocation: the handler minus its per-process Logger/Metrics decorators."""
        event = api_event(method, path, body, **kwargs)
        try:
            gate = container.request_gate
            early = gate.precheck(event, container.allowed_methods)
            response = early or container.resolve(event, FakeLambdaContext())
        except Exception as exc:
            return Answer(502, {}, None, crashed=f"{type(exc).__name__}: {exc}")
        if not isinstance(response, dict):
            response = {"statusCode": response.status_code, "headers": response.headers, "body": response.body}
        headers = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
        text = response.get("body") or ""
        answer = Answer(int(response["statusCode"]), headers, json.loads(text) if text else None)
        if answer.ok and isinstance(answer.body, dict) and answer.body.get("message_id"):
            self.acknowledged.add(str(answer.body["message_id"]))
        return answer

    def poll(self, container: ModuleType) -> str:
        """One poll cycle in this container (its own ledger connection and pipeline)."""
        runtime = self._services(container)
        try:
            runtime.poll_cycle.run(lambda: 300.0)
        except CycleFailed as failed:
            return f"cycle failed: {failed}"
        return "ok"

    def all_at_once(self, request: Callable[[ModuleType], Any]) -> list[Any]:
        """Every container runs ``request`` at the same instant; the world is checked before,
        between every two requests during, and after the race."""
        self.world.check()
        barrier = threading.Barrier(len(self.containers))

        def run(container: ModuleType) -> Any:
            self.local.services = self._services(container)
            barrier.wait(timeout=10)
            return request(container)

        with ThreadPoolExecutor(max_workers=len(self.containers)) as pool:
            results = list(pool.map(run, self.containers, timeout=60))
        FIGURES["concurrency_runs"] += 1
        FIGURES["concurrency_threads"] += len(self.containers)
        for result in results:
            outcome = f"HTTP {result.status}" if isinstance(result, Answer) else str(result)
            if outcome.startswith("cycle failed"):
                outcome = "poll cycle: a step lost an optimistic race"
            elif outcome == "ok":
                outcome = "poll cycle: completed"
            else:
                outcome = outcome if outcome.startswith("HTTP") else f"event {outcome}"
            FIGURES[f"concurrency_outcome {outcome}"] += 1
        self.world.assert_no_violations()
        self.world.check()
        return results

    def settle(self) -> list[dict[str, Any]]:
        """Run the poller until quiescent, then check every invariant again; returns the items.

        Quiescent: a cycle that completes and changes nothing, with no message waiting for work.
        When the ledger stops changing but work still waits for time (a lease to expire, absence
        of a timed-out send to be proven), the clock jumps past the lease, UNKNOWN_GRACE_SECONDS
        and one poll interval, as the schedule would let it pass.
        """
        self.world.assert_no_violations()
        jump = LEASE_SECONDS + self.settings.unknown_grace_seconds + self.settings.poll_interval_seconds
        last, waiting = "none run", ["not looked yet"]
        for _ in range(SETTLE_MAX_CYCLES):
            before = self.world.snapshot()
            last = self.poll(self.containers[0])
            FIGURES["concurrency_settle_cycles"] += 1
            after = self.world.snapshot()
            if last != "ok" or after != before:
                continue
            waiting = awaiting_work(after.values())
            if not waiting:
                FIGURES["concurrency_settles"] += 1
                return self.assert_settled()
            self.clock.advance(jump)
            FIGURES["concurrency_settle_clock_jumps"] += 1
        pytest.fail(
            f"the poller was not quiescent after {SETTLE_MAX_CYCLES} cycles: last cycle {last!r}, "
            f"still waiting: {waiting}"
        )

    def assert_settled(self) -> list[dict[str, Any]]:
        self.world.assert_no_violations()
        items = self.world.check()
        messages = items_with(items, "MSG#", "MSG")
        # No intent lost: every message an answer named is in the ledger, none is left waiting.
        missing = self.acknowledged - {message_id_of(m) for m in messages}
        assert not missing, f"acknowledged but not in the ledger: {missing}"
        assert awaiting_work(items) == []
        # Never two accepted sends for one intent: each mail an address got is the recorded send of one intent.
        recorded: defaultdict[str, set[str]] = defaultdict(set)
        for message in messages:
            recorded[s(message, "recipient")].add(s(message, "provider_message_id"))
        for address, provider_ids in recorded.items():
            mail_ids = [mail.id for mail in emails_to(address)]
            assert len(mail_ids) == len(set(mail_ids)) and set(mail_ids) <= provider_ids, (address, mail_ids)
        return items


@pytest.fixture
def fleet(
    world: World, containers: list[ModuleType], pipeline_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    world.assert_no_violations()
    fleet = Fleet(world, containers, pipeline_settings, monkeypatch)
    yield fleet
    fleet.settle()  # every run ends quiescent and checked (a no-op cycle when the test already settled)


def assert_allowed(answers: list[Answer], allowed: set[int]) -> None:
    for answer in answers:
        assert answer.crashed is None, answer
        assert answer.status in allowed | {503}, answer
        if answer.status >= 400:
            assert answer.headers.get("content-type") == PROBLEM_JSON, answer
        if answer.status in (409, 503):
            assert answer.retry_after is not None and answer.retry_after >= 1, answer


def assert_cycles_ok_or_lost_a_race(cycles: list[str]) -> None:
    """Overlapping poll cycles: a step that lost an optimistic race fails (retried next cycle), nothing else."""
    for cycle in cycles:
        if cycle != "ok":
            steps = cycle.removeprefix("cycle failed: ").split("; ")
            assert all(step.endswith(": DependencyUnavailable") for step in steps), cycles


def alert(to: str) -> dict[str, Any]:
    return {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def test_same_key_from_eight_containers_sends_once(fleet):
    to, key = f"race-{uuid.uuid4().hex[:8]}@example.com", f"race-{uuid.uuid4().hex}"
    # Given eight containers receive the same request (same Idempotency-Key) at the same instant
    answers = fleet.all_at_once(
        lambda c: fleet.call(c, "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    )
    # Then every answer is 202 or 409 (in flight) — or 503 with Retry-After — never another 5xx
    assert_allowed(answers, {202, 409})
    statuses = Counter(a.status for a in answers)
    print(f"\nsame key x{THREADS}: {dict(statuses)}")
    assert statuses[202] >= 1, statuses
    # And exactly one message, one idempotency record, one accepted send
    items = scan()
    messages = [i for i in items if s(i, "sk") == "MSG" and s(i, "recipient") == to]
    assert len(messages) == 1 and len(emails_to(to)) == 1
    assert len({a.body["message_id"] for a in answers if a.status == 202}) == 1
    # And once settled, every retry answers that message, and nothing more was sent
    fleet.clock.advance(LEASE_SECONDS + 1)
    fleet.settle()
    again = fleet.call(fleet.containers[0], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    assert again.status == 202 and again.body["message_id"] == message_id_of(messages[0])
    assert len(emails_to(to)) == 1


def _reset_answers(fleet: Fleet, account: str, email: str) -> list[Answer]:
    body = {"account_id": account, "email": email}
    return fleet.all_at_once(lambda c: fleet.call(c, "POST", "/v1/password-resets", body))


def _one_reset(account: str) -> dict[str, Any]:
    records = [i for i in scan() if s(i, "pk") == reset_pk(CALLER, account)]
    assert len(records) == 1, records
    return records[0]


def test_resets_for_one_account_from_eight_containers_mint_one_token(fleet):
    account, email = f"acct-{uuid.uuid4().hex[:8]}", f"reset-{uuid.uuid4().hex[:8]}@example.com"
    # Given eight reset requests for the same account at the same instant
    answers = _reset_answers(fleet, account, email)
    # Then all name the same reset, one record, nothing mailed yet (the poller mails)
    print(f"\nresets x{THREADS}: {dict(Counter(a.status for a in answers))}")
    assert_allowed(answers, {202})
    assert len({a.body["reset_id"] for a in answers if a.status == 202}) == 1
    _one_reset(account)
    assert mailed_tokens(email) == []
    # When eight poll cycles run at the same instant (overlapping scheduled invocations)
    cycles = fleet.all_at_once(fleet.poll)
    # Then one of them mints and mails: one mail, and its token is the one valid token
    assert_cycles_ok_or_lost_a_race(cycles)
    mailed = mailed_tokens(email)
    assert len(mailed) == 1
    assert valid_tokens(account, mailed, scan(), iso(fleet.clock.now())) == mailed
    # And the poller, run until quiescent, mails nothing more
    fleet.settle()
    assert mailed_tokens(email) == mailed
    assert valid_tokens(account, mailed, scan(), iso(fleet.clock.now())) == mailed
    # When the token is presented eight times at once, it works exactly once
    consume = {"account_id": account, "token": mailed[0]}
    results = fleet.all_at_once(lambda c: fleet.call(c, "POST", "/v1/password-resets/consume", consume))
    assert_allowed(results, {200, 400})
    assert Counter(r.status for r in results)[200] == 1
    # And once settled, no token is valid any more
    fleet.settle()
    assert valid_tokens(account, mailed, scan(), iso(fleet.clock.now())) == []


def test_concurrent_pollers_remint_a_pending_reset_once(fleet):
    account, email = f"acct-{uuid.uuid4().hex[:8]}", f"pending-{uuid.uuid4().hex[:8]}@example.com"
    body = {"account_id": account, "email": email}
    # Given a reset whose mail provably never left (SES unreachable during the poll: pending)
    first = fleet.call(fleet.containers[0], "POST", "/v1/password-resets", body)
    assert first.status == 202
    ses = Hooks("sesv2", [aws_clients.client("sesv2").meta.events])
    try:
        with ses.armed(Fault("SendEmail", "send", connect_timeout, call=None)):
            assert fleet.poll(fleet.containers[0]) == "ok"
    finally:
        ses.close()
    assert mailed_tokens(email) == []
    [message] = [
        i for i in scan() if s(i, "pk") == f"MSG#{s(_one_reset(account), 'message_id')}" and s(i, "sk") == "MSG"
    ]
    assert s(message, "state") == "pending"
    # When the user asks eight times at once, then eight poll cycles overlap, SES being back
    fleet.clock.advance(LEASE_SECONDS + 1)
    answers = _reset_answers(fleet, account, email)
    cycles = fleet.all_at_once(fleet.poll)
    # Then one re-mint under the same reset id: one mail, one valid token
    assert_allowed(answers, {202})
    assert {a.body["reset_id"] for a in answers if a.status == 202} == {first.body["reset_id"]}
    assert_cycles_ok_or_lost_a_race(cycles)
    mailed = mailed_tokens(email)
    assert len(mailed) == 1
    reset = _one_reset(account)
    assert s(reset, "reset_id") == first.body["reset_id"]
    assert valid_tokens(account, mailed, scan(), iso(fleet.clock.now())) == mailed
    # And the poller, run until quiescent, mails nothing more and leaves that token the valid one
    fleet.settle()
    assert mailed_tokens(email) == mailed
    assert s(_one_reset(account), "reset_id") == first.body["reset_id"]
    assert valid_tokens(account, mailed, scan(), iso(fleet.clock.now())) == mailed


# --- delivery events for one recipient, applied at once -----------------------------------------
LEFT_ON_QUEUE = "left on the queue"


def fleet_ledger(container: ModuleType) -> LedgerTable:
    ledger: LedgerTable = container.ledger
    return ledger


def _apply(fleet: Fleet, container: ModuleType, record: dict[str, Any]) -> str:
    """What the poller does with one queue message: a failed apply is redelivered by SQS; one that
    keeps losing races is still on the queue when the race ends, for the next poll cycle."""
    sink = fleet._services(container).sink  # over the container's own ledger connection
    body = json.dumps(record)
    for _ in range(APPLY_DELIVERIES):
        report = IngestReport()
        try:
            ingest_sqs_body(sink, body, report)
        except DependencyUnavailable:
            FIGURES["concurrency_event_redeliveries"] += 1
            continue
        return "duplicate" if report.duplicates else "applied"
    fleet.sqs.send_message(QueueUrl=fleet.settings.provider(SesSettings).events_queue_url, MessageBody=body)
    return LEFT_ON_QUEUE


def _event_ids(record: dict[str, Any]) -> set[str]:
    return {event.event_id for event in parse_sqs_body(json.dumps(record))}


def _applied_events(items: list[dict[str, Any]], pk: str) -> Counter[str]:
    """How many history entries of item ``pk`` record each delivery event (1: applied once)."""
    return Counter(
        json.loads(s(entry, "evidence"))["event_id"]
        for entry in history_of(items).get(pk, [])
        if s(entry, "type").startswith("event:")
    )


def _sent(fleet: Fleet, to: str, key: str) -> str:
    answer = fleet.call(fleet.containers[0], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    assert answer.status == 202 and answer.body["state"] == "accepted", answer
    return str(answer.body["message_id"])


def _suppression(items: list[dict[str, Any]], to: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The recipient's suppression item and its history entries."""
    [item] = [i for i in items if s(i, "pk") == f"SUP#email:{to}" and s(i, "sk") == "STATE"]
    return item, history_of(items).get(f"SUP#email:{to}", [])


def test_events_for_one_recipient_from_eight_pollers_converge(fleet):
    to = f"events-{uuid.uuid4().hex[:8]}@example.com"
    message_id = _sent(fleet, to, f"ev-{uuid.uuid4().hex}")
    at = fleet.clock.now()
    kinds = ["Send", "Delivery", "Bounce", "Complaint"]
    records = [ses_record(kind, message_id, to, at, feedback_id=f"fb-{kind}") for kind in kinds]
    # Given every event delivered twice (SNS/SQS at-least-once), all applied at the same instant
    jobs = dict(zip(fleet.containers, records + records, strict=True))
    results = fleet.all_at_once(lambda c: _apply(fleet, c, jobs[c]))
    print(f"\nevents x{THREADS}: {dict(Counter(results))}")
    # Then, whichever copy won: no event applied by both of its copies, each copy applied, found
    # to be a duplicate, or (having lost every race) left on the queue for the next poll
    assert set(results) <= {"applied", "duplicate", LEFT_ON_QUEUE}, results
    for index, kind in enumerate(kinds):
        assert [results[index], results[index + len(kinds)]].count("applied") <= 1, (kind, results)
    # When the poller runs until quiescent (it applies whatever was left on the queue)
    items = fleet.settle()
    # Then each distinct event was applied exactly once: none twice, none lost
    expected = {event_id for record in records for event_id in _event_ids(record)}
    assert _applied_events(items, f"MSG#{message_id}") == Counter(dict.fromkeys(expected, 1))
    # And the recipient is suppressed once: one effective change, one version bump, one entry
    suppression, entries = _suppression(items, to)
    assert s(suppression, "suppressed") is True and int(s(suppression, "version")) == 1
    assert [s(e, "type") for e in entries] == ["suppressed"]
    # And the message converged on the highest outcome whatever the order (a complaint outranks
    # bounce and delivery); the watcher saw its state only move forward on the way
    assert merged_state(items, message_id) == "complained"
    # And a new send to the recipient is decided "suppressed", nothing mailed
    fleet.clock.advance(1)
    key = f"after-{uuid.uuid4().hex}"
    answer = fleet.call(fleet.containers[1], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    assert answer.status == 202 and answer.body["state"] == "suppressed" and len(emails_to(to)) == 1


def test_transient_bounces_for_one_recipient_at_once_suppress_once(fleet):
    to = f"transient-{uuid.uuid4().hex[:8]}@example.com"
    # Given eight accepted messages to one recipient
    message_ids = []
    for index in range(THREADS):
        message_ids.append(_sent(fleet, to, f"tb-{index}-{uuid.uuid4().hex}"))
        fleet.clock.advance(1)
    records = [
        ses_record("TransientBounce", mid, to, fleet.clock.now(), feedback_id=f"fb-{i}")
        for i, mid in enumerate(message_ids)
    ]
    # When their eight transient bounces are applied at the same instant
    jobs = dict(zip(fleet.containers, records, strict=True))
    results = fleet.all_at_once(lambda c: _apply(fleet, c, jobs[c]))
    # Then none is taken for a duplicate of another (a bounce that lost every race waits on the queue)
    assert set(results) <= {"applied", LEFT_ON_QUEUE}, results
    # And once the poller ran until quiescent, every bounce was counted exactly once, and the
    # limit (3 within 7 days) suppressed exactly once
    items = fleet.settle()
    for message_id, record in zip(message_ids, records, strict=True):
        assert _applied_events(items, f"MSG#{message_id}") == Counter(dict.fromkeys(_event_ids(record), 1))
    suppression, entries = _suppression(items, to)
    assert s(suppression, "suppressed") is True and int(s(suppression, "version")) == 1
    assert [s(e, "type") for e in entries] == ["suppressed"]
    states = {merged_state(items, message_id) for message_id in message_ids}
    assert states == {"bounced"}
