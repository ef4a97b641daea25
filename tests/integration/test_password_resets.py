"""Password resets through the real handler: one active token, single use, no token at rest."""

import re

import boto3

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


def test_reset_sends_a_link_and_the_token_is_single_use(api, services, healthy_watermarks):
    with count_dynamodb_requests(services.ledger) as counter:
        status, _, body = request(api)
    assert status == 202 and set(body) == {"reset_id", "state", "expires_at"}
    assert counter.total == 2
    [token] = tokens_sent()
    assert token not in str(body)
    status, _, consumed = consume(api, token)
    assert status == 200 and consumed == {"reset_id": body["reset_id"], "account_id": "acct-1"}
    status, _, problem = consume(api, token)
    assert status == 400 and problem["type"].endswith("invalid-token")


def test_second_request_inside_window_returns_the_same_reset_without_mail(api, clock, healthy_watermarks):
    _, _, first = request(api)
    clock.advance(60)
    _, _, second = request(api)
    assert second["reset_id"] == first["reset_id"]
    assert len(sent_emails()) == 1


def test_new_reset_after_window_invalidates_the_old_token(api, clock, healthy_watermarks):
    request(api)
    clock.advance(601)
    _, _, second = request(api)
    old, new = tokens_sent()
    assert consume(api, old)[0] == 400
    status, _, body = consume(api, new)
    assert status == 200 and body["reset_id"] == second["reset_id"]


def test_expired_token_is_rejected_with_the_same_answer(api, clock, healthy_watermarks):
    request(api)
    [token] = tokens_sent()
    clock.advance(601)
    status, _, body = consume(api, token)
    assert status == 400 and body["type"].endswith("invalid-token")


def test_guessing_locks_the_reset(api, services, healthy_watermarks):
    request(api)
    [token] = tokens_sent()
    for _ in range(services.settings.reset_max_failed_attempts):
        assert consume(api, "A" * 43)[0] == 400
    assert consume(api, token)[0] == 400


def test_suppressed_address_gets_the_same_shape(api, healthy_watermarks):
    api("PUT", "/v1/admin/suppressions/bob%40example.com", {"reason": "complaint"})
    status, _, body = request(api)
    assert status == 202 and set(body) == {"reset_id", "state", "expires_at"} and body["state"] == "requested"
    assert sent_emails() == []


def test_no_token_is_stored_anywhere(api, healthy_watermarks):
    request(api)
    [token] = tokens_sent()
    items = boto3.client("dynamodb").scan(TableName=TABLE)["Items"]
    assert items and token not in str(items)
