"""DynamoDB faults on the ledger's client: every route answers 503 + Retry-After, state stays
consistent, and the retry after the fault clears succeeds exactly once.

Faults are error answers returned from a ``before-send.dynamodb`` hook on every client of the
ledger (``ledger_emitters(services.messages)``), so botocore parses them and its own retry
policy (standard mode) runs as in production, minus the sleeping.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from local.constants import ACCOUNT_ID, SMS_FAILURE_LOG_GROUP
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.watermarks import WatermarkCache
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import (
    Answer,
    Fault,
    connect_timeout,
    due_kind_of,
    dynamodb_error,
    emails_to,
    internal_error,
    items_with,
    mailed_tokens,
    message_id_of,
    read_timeout,
    s,
)
from tests.support.fakes import ADMIN

LEASE_SECONDS = 60


@dataclass(frozen=True)
class DynamoFault:
    code: str
    status: int
    sdk_retries: bool  # botocore's standard mode retries it (the client never sees a single one)
    reasons: tuple[str, ...] = ()


FAULTS = [
    DynamoFault("ProvisionedThroughputExceededException", 400, sdk_retries=True),
    DynamoFault("ThrottlingException", 400, sdk_retries=True),
    DynamoFault("InternalServerError", 500, sdk_retries=True),
    # On the second item (the recipient: another key's send holds it). On the key's own message
    # item the conflict is the key in flight, a 409 (tests/integration/test_send_conflicts.py).
    DynamoFault("TransactionCanceledException", 400, sdk_retries=False, reasons=("None", "TransactionConflict")),
]


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedWorld]:
    with shared_world() as world:
        yield world


@pytest.fixture
def world(shared: SharedWorld) -> SharedWorld:
    shared.fresh()
    return shared


def alert(to: str) -> dict[str, Any]:
    return {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def fresh_address() -> str:
    return f"ddb-{uuid.uuid4().hex[:10]}@example.com"


def assert_unavailable(answer: Answer) -> None:
    # Then: 503 problem+json that tells the caller when to come back
    assert answer.status == 503, answer
    assert answer.is_problem and answer.body["status"] == 503 and answer.body["type"].endswith("dependency-unavailable")
    assert answer.retry_after is not None and answer.retry_after >= 1, answer


def faulted(
    fault: DynamoFault, operation: str, call: int | None, attempts: int | None, key_prefix: str | None = None
) -> Fault:
    reasons = list(fault.reasons) or None
    error = dynamodb_error(fault.code, fault.status, reasons)
    return Fault(operation, "send", error, call=call, attempts=attempts, key_prefix=key_prefix)


# --- the send path ----------------------------------------------------------------------------
@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.code)
def test_intent_write_fault_is_503_and_the_retry_sends_once(world, fault):
    to, key = fresh_address(), f"k-{uuid.uuid4().hex}"
    send = lambda: world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})  # noqa: E731
    # Given DynamoDB refuses the intent transaction for the whole invocation
    armed = faulted(fault, "TransactWriteItems", call=None, attempts=None)
    with world.dynamo.armed(armed):
        answer = send()
    assert_unavailable(answer)
    # And botocore retried what it may, within bounds (standard mode, 3 retries: at most 4 attempts)
    assert (2 <= armed.fired <= 4) if fault.sdk_retries else (armed.fired == 1)
    # And nothing half-written: no message (which is also the key's record), no send
    items = world.watch.check()
    assert items_with(items, "MSG#") == []
    assert emails_to(to) == []
    # When the client retries after the fault cleared: exactly one send
    retried = send()
    assert retried.status == 202 and retried.body["state"] == "accepted"
    assert send().headers.get("idempotent-replayed") == "true"
    assert len(emails_to(to)) == 1
    world.watch.check()


@pytest.mark.parametrize("fault", [f for f in FAULTS if f.sdk_retries], ids=lambda f: f.code)
def test_a_single_transient_fault_is_absorbed_by_sdk_retries(world, fault):
    to = fresh_address()
    # Given one throttled/500 attempt on the intent write
    armed = faulted(fault, "TransactWriteItems", call=1, attempts=1)
    with world.dynamo.armed(armed):
        answer = world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "transient"})
    # Then the caller never sees it: one 202, one send
    assert armed.fired == 1 and answer.status == 202 and answer.body["state"] == "accepted"
    assert len(emails_to(to)) == 1
    world.watch.check()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.code)
def test_outcome_write_fault_is_503_then_the_key_settles_without_a_second_send(world, fault):
    to, key = fresh_address(), f"k-{uuid.uuid4().hex}"
    send = lambda: world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": key})  # noqa: E731
    # Given the intent landed and SES accepted, but the outcome write keeps failing
    with world.dynamo.armed(faulted(fault, "UpdateItem", call=1, attempts=None, key_prefix="MSG#")):
        answer = send()
    assert_unavailable(answer)
    # Then the intent is there, consistent, in flight (the poller's evidence), sent once
    items = world.watch.check()
    [message] = items_with(items, "MSG#", "MSG")
    assert s(message, "state") == "sending" and due_kind_of(message) == "inflight"
    assert len(emails_to(to)) == 1
    # When the client retries: in flight until the lease ends, then the message view
    early = send()
    assert early.status == 409 and early.retry_after >= 1 and early.is_problem
    world.clock.advance(LEASE_SECONDS + 1)
    late = send()
    assert late.status == 202 and late.body["message_id"] == message_id_of(message)
    assert late.body["state"] == "sending" and late.retry_after >= 1
    assert len(emails_to(to)) == 1
    world.watch.check()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.code)
def test_reset_request_fault_is_503_and_the_retry_mails_one_token(world, fault):
    email, account = fresh_address(), f"acct-{uuid.uuid4().hex[:10]}"
    body = {"account_id": account, "email": email}
    # Given the reset transaction fails for the whole invocation
    with world.dynamo.armed(faulted(fault, "TransactWriteItems", call=None, attempts=None)):
        answer = world.client("POST", "/v1/password-resets", body)
    assert_unavailable(answer)
    items = world.watch.check()
    assert items_with(items, "RESET#") == [] and mailed_tokens(email) == []
    # When the user asks again and the poller runs: one reset, one mail, and its token works once
    again = world.client("POST", "/v1/password-resets", body)
    assert again.status == 202 and again.body["state"] == "requested"
    world.poll()
    [token] = mailed_tokens(email)
    world.watch.check()
    consumed = world.client("POST", "/v1/password-resets/consume", {"account_id": account, "token": token})
    assert consumed.status == 200 and consumed.body["reset_id"] == again.body["reset_id"]


# --- read and admin routes -------------------------------------------------------------------------
def _seed_message(world: SharedWorld) -> str:
    answer = world.client("POST", "/v1/messages", alert(fresh_address()), headers={"Idempotency-Key": "seed"})
    assert answer.status == 202
    return str(answer.body["message_id"])


def _seed_reset(world: SharedWorld) -> tuple[str, str]:
    email, account = fresh_address(), f"acct-{uuid.uuid4().hex[:10]}"
    assert world.client("POST", "/v1/password-resets", {"account_id": account, "email": email}).status == 202
    world.poll()
    [token] = mailed_tokens(email)
    return account, token


ROUTES: dict[str, tuple[str, Callable[[SharedWorld], Any], Callable[[SharedWorld, Any], Answer]]] = {
    "get-message": (
        "Query",
        _seed_message,
        lambda w, message_id: w.client("GET", f"/v1/messages/{message_id}"),
    ),
    "get-suppression": (
        "GetItem",
        lambda w: None,
        lambda w, _: w.client("GET", "/v1/suppressions/someone%40example.com"),
    ),
    "admin-suppress": (
        "UpdateItem",
        lambda w: None,
        lambda w, _: w.client("PUT", "/v1/admin/suppressions/x%40example.com", {"reason": "r"}, principal=ADMIN),
    ),
    "consume-reset": (
        "UpdateItem",
        _seed_reset,
        lambda w, seeded: w.client(
            "POST", "/v1/password-resets/consume", {"account_id": seeded[0], "token": seeded[1]}
        ),
    ),
}


@pytest.mark.parametrize("fault", FAULTS[:3], ids=lambda f: f.code)
@pytest.mark.parametrize("route", list(ROUTES))
def test_other_routes_answer_503_and_recover(world, route, fault):
    operation, seed, call = ROUTES[route]
    seeded = seed(world)
    # Given the route's DynamoDB operation fails for the whole invocation
    with world.dynamo.armed(faulted(fault, operation, call=None, attempts=None)):
        answer = call(world, seeded)
    assert_unavailable(answer)
    world.watch.check()
    # When it is called again after the fault cleared, it works (a consume was not used up)
    again = call(world, seeded)
    assert again.status == 200, again
    world.watch.check()


# --- bugs and wire contracts -------------------------------------------------------------------------------------
def test_intent_write_read_timeout_is_503_not_a_crash(world):
    # Given every attempt of the intent transaction times out (SDK retries exhausted)
    with world.dynamo.armed(Fault("TransactWriteItems", "send", read_timeout, call=None)):
        answer = world.client("POST", "/v1/messages", alert(fresh_address()), headers={"Idempotency-Key": "t"})
    # Then the caller gets the same 503 + Retry-After as for any other DynamoDB fault
    assert answer.crashed is None, answer
    assert_unavailable(answer)


def _token_reuse(world: SharedWorld) -> dict[str, list[str]]:
    """ClientRequestToken → the distinct TransactItems sent with it."""
    seen: dict[str, set[str]] = defaultdict(set)
    for operation, params in world.dynamo.requests:
        if operation == "TransactWriteItems" and params.get("ClientRequestToken"):
            seen[params["ClientRequestToken"]].add(json.dumps(params["TransactItems"], sort_keys=True))
    return {token: sorted(bodies) for token, bodies in seen.items() if len(bodies) > 1}


# DynamoDB's contract: a ClientRequestToken reused with other parameters within 10 minutes is
# IdempotentParameterMismatch (moto does not enforce it, so the wire requests are checked).
def test_a_client_request_token_is_never_reused_for_a_different_reset_outcome(world):
    world.dynamo.requests.clear()
    body = {"account_id": f"acct-{uuid.uuid4().hex[:10]}", "email": fresh_address()}
    assert world.client("POST", "/v1/password-resets", body).status == 202
    # Given SES is unreachable for two poll cycles in a row (each outcome: pending)
    with world.ses.armed(Fault("SendEmail", "send", connect_timeout, call=None)):
        world.poll()  # mint (attempt 1), send, pending
        world.clock.advance(LEASE_SECONDS + 1)
        world.poll()  # re-mint under the same reset id (attempt 2), send, pending
    [message] = items_with(world.watch.check(), "MSG#", "MSG")
    assert s(message, "state") == "pending" and int(s(message, "attempt")) == 2
    # Then no token was sent twice with different transaction items
    assert len([op for op, _ in world.dynamo.requests if op == "TransactWriteItems"]) >= 3  # intent, 2 mints
    assert _token_reuse(world) == {}


def test_a_client_request_token_is_never_reused_for_a_different_intent(world):
    world.dynamo.requests.clear()
    to = fresh_address()
    # Given a recipient sent to 30 s ago (under the default `allow` policy an intent no longer
    # conditions on the last send, so each send is one intent; a re-commit is `defer`'s alone)
    assert world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "one"}).status == 202
    world.clock.advance(30)
    answer = world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "two"})
    assert answer.status == 202
    # Then the exact re-commit did not reuse the first attempt's token with other items
    intents = [p for op, p in world.dynamo.requests if op == "TransactWriteItems"]
    assert len(intents) >= 2
    assert _token_reuse(world) == {}


@pytest.fixture
def deferring(world: SharedWorld) -> Iterator[None]:
    """Transactional sends under `defer`: an intent conditions on the recipient's last send."""
    allowing = world.services.settings
    world.services.settings = allowing.replace({"stale_eligibility_policy": {"transactional": StalePolicy.DEFER}})
    yield
    world.services.settings = allowing


def test_under_defer_a_stale_optimistic_intent_is_committed_again_once_with_a_token_of_its_own(world, deferring):
    to = fresh_address()
    # Given a container whose one watermark read is from before the recipient's last send
    world.services.poller_state.cache = WatermarkCache()
    world.services.poller_state.recent_watermark("ses", world.clock.now())
    assert world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "one"}).status == 202
    # and a poller that has since proven that send's outcome knowable (past its grace)
    world.clock.advance(world.services.settings.unknown_grace_seconds + 60)
    world.healthy_watermarks()
    world.dynamo.requests.clear()
    # When the recipient is sent to again
    answer = world.client("POST", "/v1/messages", alert(to), headers={"Idempotency-Key": "two"})
    # Then the optimistic intent (no send after the container's old watermark) is turned away and
    # the exact one (this last send, a watermark read now) commits: sent at once, not deferred
    assert answer.status == 202 and answer.body["state"] == "accepted", answer
    intents = [params for op, params in world.dynamo.requests if op == "TransactWriteItems"]
    assert len(intents) == 2 and len({params["ClientRequestToken"] for params in intents}) == 2
    assert _token_reuse(world) == {}
    history = world.client("GET", f"/v1/messages/{answer.body['message_id']}").body["history"]
    assert history[0]["stale_policy"] == "defer" and history[0]["eligibility"] == "eligible"
    assert history[0]["watermark_age_seconds"] < 60  # the exact decision's watermark, not the container's old one
    # And exactly once: one message item per send, one email per send
    messages = items_with(world.watch.check(), "MSG#", "MSG")
    assert len(messages) == 2 and len(emails_to(to)) == 2


# --- SNS SMS status records (the sms_delivery_logs subscription) --------------------------------
PAGER = "+12065550121"


def deliver_status_record(world: SharedWorld, monkeypatch: pytest.MonkeyPatch, record: str) -> dict[str, Any]:
    """One CloudWatch Logs subscription invocation carrying one delivery-status record."""
    from sendledger import bootstrap
    from sendledger.handlers import sms_delivery_logs
    from sendledger.providers.sns.events import encode_subscription_event
    from tests.support.fakes import FakeLambdaContext

    monkeypatch.setattr(bootstrap, "runtime", lambda: world.ingestion.services)
    document = {
        "messageType": "DATA_MESSAGE",
        "owner": ACCOUNT_ID,
        "logGroup": SMS_FAILURE_LOG_GROUP,
        "logStream": "stream",
        "subscriptionFilters": ["sendledger-sms"],
        "logEvents": [{"id": "1", "timestamp": 0, "message": record}],
    }
    result: dict[str, Any] = sms_delivery_logs.lambda_handler(encode_subscription_event(document), FakeLambdaContext())
    return result


def paged_sms(world: SharedWorld) -> dict[str, Any]:
    body = {"channel": "sms", "to": PAGER, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    answer = world.client("POST", "/v1/messages", body, headers={"Idempotency-Key": f"k-{uuid.uuid4().hex}"})
    assert answer.status == 202 and answer.body["state"] == "accepted", answer
    world.publish_receipt(answer.body)
    return dict(answer.body)


def assert_record_not_applied(world: SharedWorld, provider_message_id: str) -> None:
    items = world.watch.check()
    assert items_with(items, "EVT#") == []
    [receipt] = items_with(items, f"PMID#{provider_message_id}")  # as the publisher wrote it: no state
    assert s(receipt, "state") is None and s(receipt, "sk") == "PMID"
    assert [i for i in items_with(items, "SUP#", "STATE") if s(i, "suppressed")] == []


def assert_applied_once(world: SharedWorld, monkeypatch: pytest.MonkeyPatch, sent: dict[str, Any], record: str) -> None:
    # The redelivery of the same record is a duplicate, and the page reads failed with one entry
    assert deliver_status_record(world, monkeypatch, record) == {"applied": 0, "duplicates": 1, "suppressed": 0}
    message = world.client("GET", f"/v1/messages/{sent['message_id']}").body
    assert message["state"] == "failed"
    assert [e["type"] for e in message["history"]].count("event:SmsFailure") == 1
    assert world.client("GET", f"/v1/suppressions/{PAGER.replace('+', '%2B')}").body["suppressed"] is True
    world.watch.check()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.code)
def test_status_record_fault_fails_the_invocation_and_the_redelivery_applies_once(world, fault, monkeypatch):
    from sendledger.handlers.sms_delivery_logs import RecordsFailed
    from tests.integration.conftest import sms_record

    # Given an accepted SMS, and DynamoDB refusing every write while its status record arrives
    sent = paged_sms(world)
    pmid = sent["provider_message_id"]
    record = sms_record(pmid, PAGER, "FAILURE", "Invalid phone number", world.clock.now())
    armed = faulted(fault, "TransactWriteItems", call=None, attempts=None)
    # Then the invocation fails (Lambda retries the asynchronous delivery)
    with world.dynamo.armed(armed), pytest.raises(RecordsFailed):
        deliver_status_record(world, monkeypatch, record)
    # And nothing of the record is written: no dedupe item, no receipt change, no suppression
    assert_record_not_applied(world, pmid)
    # When Lambda redelivers it: applied once, suppressing the number
    assert deliver_status_record(world, monkeypatch, record) == {"applied": 1, "duplicates": 0, "suppressed": 1}
    assert_applied_once(world, monkeypatch, sent, record)


def test_status_record_applied_but_answer_lost_is_a_duplicate_on_redelivery(world, monkeypatch):
    from sendledger.handlers.sms_delivery_logs import RecordsFailed
    from tests.integration.conftest import sms_record

    # Given the record's transaction lands but its answer is lost (a 500 after the write)
    sent = paged_sms(world)
    record = sms_record(sent["provider_message_id"], PAGER, "FAILURE", "Invalid phone number", world.clock.now())
    lost_answer = Fault("TransactWriteItems", "after", internal_error, call=1)
    with world.dynamo.armed(lost_answer), pytest.raises(RecordsFailed):
        deliver_status_record(world, monkeypatch, record)
    # When Lambda redelivers it: a duplicate, and everything it derived is there exactly once
    assert_applied_once(world, monkeypatch, sent, record)
