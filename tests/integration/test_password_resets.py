"""Password resets through the real handler: one active token, single use, no token at rest."""

import re

import boto3
import pytest

from sendledger.adapters.dynamodb.keys import message_pk
from sendledger.domain.ids import reset_message_id
from sendledger.domain.provider import CallResult, ProviderResponse
from tests.conftest import TABLE
from tests.support.counting import count_dynamodb_requests
from tests.support.outbox import sent_emails

LINK = re.compile(r"reset\?token=([A-Za-z0-9_-]+)")


def request(api, account="acct-1", email="bob@example.com"):
    return api("POST", "/v1/password-resets", {"account_id": account, "email": email})


def consume(api, token, account="acct-1"):
    return api("POST", "/v1/password-resets/consume", {"account_id": account, "token": token})


def tokens_sent():
    return [LINK.search(m.body).group(1) for m in sent_emails()]


@pytest.fixture
def mailed(ingestion):
    """The tokens mailed so far, after the poller has sent what is due (as it would within a poll interval)."""

    def run():
        ingestion.poll()
        return tokens_sent()

    return run


def test_reset_sends_a_link_and_the_token_is_single_use(
    api, services, mailed, warm_watermarks, warm_caller_settings, warm_templates
):
    # Given a reset request: one DynamoDB transaction, answered before any provider call
    with count_dynamodb_requests() as counter:
        status, _, body = request(api)
    assert status == 202 and set(body) == {"reset_id", "state", "expires_at"}
    assert counter.total == 1 and sent_emails() == []
    # When the poller runs, the mail goes out with a fresh token
    [token] = mailed()
    assert token not in str(body)
    status, _, consumed = consume(api, token)
    assert status == 200 and consumed == {"reset_id": body["reset_id"], "account_id": "acct-1"}
    status, _, problem = consume(api, token)
    assert status == 400 and problem["type"].endswith("invalid-token")


def test_second_request_inside_window_returns_the_same_reset_without_mail(api, clock, mailed, healthy_watermarks):
    _, _, first = request(api)
    mailed()
    clock.advance(60)
    _, _, second = request(api)
    assert second["reset_id"] == first["reset_id"]
    assert len(mailed()) == 1


def test_new_reset_after_window_invalidates_the_old_token(api, clock, mailed, healthy_watermarks):
    request(api)
    mailed()
    clock.advance(601)
    _, _, second = request(api)
    old, new = mailed()
    assert consume(api, old)[0] == 400
    status, _, body = consume(api, new)
    assert status == 200 and body["reset_id"] == second["reset_id"]


def test_expired_token_is_rejected_with_the_same_answer(api, clock, mailed, healthy_watermarks):
    request(api)
    [token] = mailed()
    clock.advance(601)
    status, _, body = consume(api, token)
    assert status == 400 and body["type"].endswith("invalid-token")


def test_guessing_locks_the_reset(api, services, mailed, healthy_watermarks):
    request(api)
    [token] = mailed()
    for _ in range(services.settings.reset_max_failed_attempts):
        assert consume(api, "A" * 43)[0] == 400
    assert consume(api, token)[0] == 400


def test_suppressed_address_gets_the_same_shape(api, mailed, healthy_watermarks):
    api("PUT", "/v1/admin/suppressions/bob%40example.com", {"reason": "complaint"})
    status, _, body = request(api)
    assert status == 202 and set(body) == {"reset_id", "state", "expires_at"} and body["state"] == "requested"
    assert mailed() == []


def test_suppression_between_request_and_mail_stops_the_mail(api, mailed, healthy_watermarks):
    # Given a reset requested for a deliverable address
    _, _, body = request(api)
    # When the address is suppressed before the poller sends
    api("PUT", "/v1/admin/suppressions/bob%40example.com", {"reason": "complaint arrived"})
    # Then no mail (and so no token) goes out
    assert mailed() == []


def test_no_token_is_stored_anywhere(api, mailed, healthy_watermarks):
    request(api)
    [token] = mailed()
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    assert items and token not in str(items)


def test_suppressed_address_gets_the_same_reset_id_inside_the_window(api, clock, mailed, healthy_watermarks):
    # Given a suppressed address (an oracle would answer it differently from a deliverable one)
    api("PUT", "/v1/admin/suppressions/bob%40example.com", {"reason": "complaint"})
    _, _, first = request(api)
    clock.advance(60)
    _, _, second = request(api)
    # Then, like any address, the second request inside the window names the same reset
    assert second["reset_id"] == first["reset_id"] and mailed() == []


def test_mail_of_a_replaced_reset_is_cancelled_not_left_waiting(api, services, clock, mailed, healthy_watermarks):
    # Given a reset whose mail could not be sent yet (the provider throttles), then replaced
    services.email.send_email = lambda *args, **kwargs: ProviderResponse(CallResult.THROTTLED, error_code="Throttling")
    _, _, first = request(api)
    mailed()
    clock.advance(601)
    request(api)
    first_mail = {"pk": {"S": message_pk(reset_message_id(first["reset_id"]))}}
    pending = boto3.client("dynamodb").get_item(TableName=TABLE, Key={**first_mail, "sk": {"S": "MSG"}})["Item"]
    assert pending["state"]["S"] == "pending"
    # When the poller comes back to the old mail
    clock.advance(120)
    mailed()
    # Then it is withdrawn for good, not left pending forever
    state = boto3.client("dynamodb").get_item(TableName=TABLE, Key={"pk": first_mail["pk"], "sk": {"S": "MSG"}})["Item"]
    assert state["state"]["S"] == "cancelled" and "due_kind" not in state
