"""What DynamoDB answers when two writes meet on one item, and what the api makes of it.

A transaction is cancelled with reason ``TransactionConflict`` on an item another write holds
at that moment. On a keyed send's message item (its id derives from the key) that other write
is the same key's first request: the answer is the draft's 409 with Retry-After, not a 503. A
conflict on the recipient item alone is another key's send to the same recipient: the ledger
is busy, 503 with Retry-After as before. Either way nothing is written and nothing is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.conftest import TABLE, Api
from tests.reliability.faults import dynamodb_error
from tests.support.counting import ledger_emitters
from tests.support.outbox import sent_emails

ALERT = {"channel": "email", "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


@pytest.fixture
def conflict_once(api: Api) -> Iterator[Any]:
    """``conflict_once(reasons)``: the next intent transaction is cancelled with these reasons."""
    armed: list[list[str]] = []

    def before_send(request: Any, **_: Any) -> Any:
        if armed and b"TransactItems" in (request.body or b""):
            return dynamodb_error("TransactionCanceledException", 400, armed.pop())(request)
        return None

    emitters = ledger_emitters(api.services.messages)
    for emitter in emitters:
        emitter.register_first("before-send.dynamodb.TransactWriteItems", before_send)
    yield armed.append
    for emitter in emitters:
        emitter.unregister("before-send.dynamodb.TransactWriteItems", before_send)


def send(api: Api, to: str, key: str) -> tuple[int, dict[str, str], Any]:
    return api("POST", "/v1/messages", {**ALERT, "to": to}, headers={"Idempotency-Key": key})


def nothing_written() -> bool:
    """No message and no recipient item (the watermarks of a healthy pipeline are there before)."""
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    return not [item for item in items if item["pk"]["S"].startswith(("MSG#", "SUP#"))]


@pytest.mark.usefixtures("healthy_watermarks")
def test_a_conflict_on_the_keys_message_item_is_409_in_flight(api: Api, conflict_once: Any) -> None:
    # Given the same key's first request holds its message item (reasons: message, recipient)
    conflict_once(["TransactionConflict", "None"])
    status, headers, problem = send(api, "ann@example.com", "k-conflict")
    # Then this one is told to come back shortly, as for any request of a key in flight
    assert status == 409 and problem["type"].endswith("/idempotency-key-in-flight"), problem
    assert int(headers["retry-after"]) >= 1
    assert nothing_written() and sent_emails() == []
    # And once the first one is done, the retry is answered (here: it is the first to land)
    status, _, view = send(api, "ann@example.com", "k-conflict")
    assert status == 202 and view["state"] == "accepted" and len(sent_emails()) == 1


@pytest.mark.usefixtures("healthy_watermarks")
def test_a_conflict_on_the_recipient_alone_is_503(api: Api, conflict_once: Any) -> None:
    # Given another key's send to the same recipient holds the recipient item
    conflict_once(["None", "TransactionConflict"])
    status, headers, problem = send(api, "bo@example.com", "k-other")
    assert status == 503 and problem["type"].endswith("/dependency-unavailable"), problem
    assert int(headers["retry-after"]) >= 1
    assert nothing_written() and sent_emails() == []
