"""Concurrent clients against ONE moto server: the same intent is sent once, one token per
account, and delivery events for one recipient converge.

Each thread plays one Lambda container: its own copy of the ``api`` handler module (the
Powertools resolver keeps the current event on the app object, which a container never shares)
and its own ledger connection, all talking HTTP to one ``ThreadedMotoServer``.

moto applies a TransactWriteItems as "check and write item by item, restore a deep copy of the
table on failure", which under concurrent requests can erase another request's writes. Real
DynamoDB serializes transactions; the server here serializes requests (one at a time) so that
what is tested is the product's interleavings between requests, not moto's lack of isolation.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

import boto3
import pytest
import requests
from moto.moto_server.threaded_moto_server import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    ThreadedMotoServer,
    create_backend_app,
)
from werkzeug.serving import make_server

from sendledger import wiring
from sendledger.adapters import aws as aws_clients
from sendledger.adapters.dynamodb import models
from sendledger.adapters.dynamodb.events_store import DynamoEventStore
from sendledger.adapters.dynamodb.ledger import DynamoLedger, wm_pk
from sendledger.adapters.dynamodb.models import WatermarkItem
from sendledger.adapters.dynamodb.schema import create_ledger_table
from sendledger.adapters.ses import SesEmailSender
from sendledger.adapters.sns import SnsSmsSender
from sendledger.domain.clock import iso
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.provider import Backoff
from sendledger.handlers import api as api_module
from sendledger.ingest_wiring import build_pipeline
from sendledger.settings import Settings
from sendledger.usecases.context import Services
from sendledger.usecases.ingest import IngestReport, ingest_sqs_body
from sendledger.usecases.poll import CycleFailed, poll_cycle
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
    mailed_tokens,
    s,
    scan,
    valid_tokens,
)
from tests.support.fakes import FakeClock, FakeLambdaContext, FakeSleeper, api_event

THREADS = 8
LEASE_SECONDS = 60


class SerializedMotoServer(ThreadedMotoServer):
    """ThreadedMotoServer whose requests are applied one at a time (see the module docstring)."""

    def _server_entry(self) -> None:
        app = DomainDispatcherApplication(create_backend_app)
        lock = threading.Lock()

        def serialized(environ: Any, start_response: Any) -> list[bytes]:
            with lock:
                return list(app(environ, start_response))

        self._server = make_server(self._ip_address, self._port, serialized, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unbind_models() -> None:
    for model in models.ALL_MODELS:
        model._connection = None


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    port = _free_port()
    server = SerializedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    saved = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = url
    try:
        aws_clients.client.cache_clear()
        _unbind_models()
        models.bind(TABLE)
        create_ledger_table(boto3.client("dynamodb"), TABLE)
        boto3.client("ses").verify_email_identity(EmailAddress=SENDER)
        boto3.client("sesv2").create_configuration_set(ConfigurationSetName="sendledger-events")
        yield url
    finally:
        requests.post(f"{url}/moto-api/reset", timeout=5)
        server.stop()
        if saved is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = saved
        aws_clients.client.cache_clear()
        _unbind_models()  # later tests (mock_aws) get fresh clients without the endpoint


def _handler_copy(index: int) -> ModuleType:
    """A fresh import of the api handler module: one resolver per simulated container."""
    spec = importlib.util.spec_from_file_location(f"sendledger_api_container_{index}", api_module.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pipeline_settings(moto_server: str) -> Settings:
    """The SES events queue, topic and log groups on the server; the settings that name them."""
    services = Services(
        ledger=DynamoLedger(TABLE),
        email=SesEmailSender(SENDER, "sendledger-events"),
        sms=SnsSmsSender(),
        clock=FakeClock(),
        settings=Settings(table_name=TABLE, sender_email=SENDER, poll_interval_seconds=60),
    )
    make_ingestion(services)
    return services.settings


@pytest.fixture(scope="module")
def containers(moto_server: str) -> list[ModuleType]:
    modules = [_handler_copy(i) for i in range(THREADS)]
    for module in modules:  # each container has its own ledger connection (built once: ~0.1 s each)
        module.ledger = DynamoLedger(TABLE)
        module.ledger.request_emitters()
    return modules


class Fleet:
    """THREADS containers sharing a clock and the ledger; wiring.services() answers per thread."""

    def __init__(self, containers: list[ModuleType], settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
        self.containers = containers
        self.clock = FakeClock()
        self.settings = settings
        self.local = threading.local()
        self.main = self._services(containers[0])
        monkeypatch.setattr(wiring, "services", lambda: getattr(self.local, "services", self.main))
        now = iso(self.clock.now())
        for source in ("ses", "sms"):
            WatermarkItem(wm_pk(source), "WM", watermark=now, updated_at=now).save()

    def _services(self, container: ModuleType) -> Services:
        return Services(
            ledger=container.ledger,
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
            response = container._precheck(event) or container.app.resolve(event, FakeLambdaContext())
        except Exception as exc:
            return Answer(502, {}, None, crashed=f"{type(exc).__name__}: {exc}")
        if not isinstance(response, dict):
            response = {"statusCode": response.status_code, "headers": response.headers, "body": response.body}
        headers = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
        text = response.get("body") or ""
        return Answer(int(response["statusCode"]), headers, json.loads(text) if text else None)

    def poll(self, container: ModuleType) -> str:
        """One poll cycle in this container (its own ledger connection and pipeline)."""
        pipeline = build_pipeline(self._services(container))
        try:
            poll_cycle(pipeline, lambda: 300.0)
        except CycleFailed as failed:
            return f"cycle failed: {failed}"
        return "ok"

    def all_at_once(self, request: Callable[[ModuleType], Any]) -> list[Any]:
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
        return results


@pytest.fixture
def fleet(containers: list[ModuleType], pipeline_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    return Fleet(containers, pipeline_settings, monkeypatch)


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
    # And once settled, every retry answers that message
    fleet.clock.advance(LEASE_SECONDS + 1)
    again = fleet.call(fleet.containers[0], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    assert again.status == 202 and again.body["message_id"] == s(messages[0], "message_id")


def _reset_answers(fleet: Fleet, account: str, email: str) -> list[Answer]:
    body = {"account_id": account, "email": email}
    return fleet.all_at_once(lambda c: fleet.call(c, "POST", "/v1/password-resets", body))


def _one_reset(account: str) -> dict[str, Any]:
    records = [i for i in scan() if s(i, "pk") == f"RESET#{account}"]
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
    LedgerWatch().check()
    # When the token is presented eight times at once, it works exactly once
    consume = {"account_id": account, "token": mailed[0]}
    results = fleet.all_at_once(lambda c: fleet.call(c, "POST", "/v1/password-resets/consume", consume))
    assert_allowed(results, {200, 400})
    assert Counter(r.status for r in results)[200] == 1


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
    LedgerWatch().check()


# --- delivery events for one recipient, applied at once -----------------------------------------
def _apply(fleet: Fleet, container: ModuleType, record: dict[str, Any]) -> str:
    """What the poller does with one queue message; a failed apply is redelivered by SQS."""
    services = fleet._services(container)
    store = DynamoEventStore(services.ledger)
    for _ in range(5):
        report = IngestReport()
        try:
            ingest_sqs_body(services, store, json.dumps(record), report)
        except DependencyUnavailable:
            FIGURES["concurrency_event_redeliveries"] += 1
            continue
        return "duplicate" if report.duplicates else "applied"
    return "gave up"


def _sent(fleet: Fleet, to: str, key: str) -> str:
    answer = fleet.call(fleet.containers[0], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})
    assert answer.status == 202 and answer.body["state"] == "accepted", answer
    return str(answer.body["message_id"])


def _suppression(to: str) -> dict[str, Any]:
    [item] = [i for i in scan() if s(i, "pk") == f"SUP#email:{to}" and s(i, "sk") == "STATE"]
    return item


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
    # Then each distinct event is applied once, its copy is a duplicate
    assert sorted(results) == ["applied"] * 4 + ["duplicate"] * 4, results
    # And the recipient is suppressed once: one effective change, one version bump
    suppression = _suppression(to)
    assert s(suppression, "suppressed") is True and int(s(suppression, "version")) == 1
    # And the message converged on the highest outcome (a complaint outranks bounce and delivery)
    [message] = [i for i in scan() if s(i, "pk") == f"MSG#{message_id}" and s(i, "sk") == "MSG"]
    assert s(message, "state") == "complained"
    LedgerWatch().check()
    # And a new send to the recipient is decided "suppressed", nothing mailed
    fleet.clock.advance(1)
    answer = fleet.call(fleet.containers[1], "POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "after"})
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
    # Then every bounce is counted, and the limit (3 within 7 days) suppresses exactly once
    assert results == ["applied"] * THREADS, results
    suppression = _suppression(to)
    assert s(suppression, "suppressed") is True and int(s(suppression, "version")) == 1
    states = {s(i, "state") for i in scan() if s(i, "sk") == "MSG" and s(i, "message_id") in message_ids}
    assert states == {"bounced"}
    LedgerWatch().check()
