import pytest

from sendledger.domain import idempotency, tokens
from sendledger.domain.callers import CallerId
from sendledger.domain.errors import IdempotencyKeyMissing, InvalidRequest


@pytest.mark.parametrize(
    ("header", "expected"),
    [("abc", "abc"), ('"abc"', "abc"), ('"a\\"b"', 'a"b'), (" x ", "x"), ("k" * 255, "k" * 255)],
)
def test_valid_keys(header, expected):
    assert idempotency.parse_key(header) == expected


@pytest.mark.parametrize("header", ["", '""', "k" * 256, "tab\there", "é", '"dangling\\"', '"a"b"'])
def test_invalid_keys(header):
    with pytest.raises(InvalidRequest):
        idempotency.parse_key(header)


def test_event_id_key_is_sha256_of_event_and_version():
    import hashlib

    assert idempotency.resolve_key(None, "evt-1", "1") == hashlib.sha256(b"evt-1:1").hexdigest()
    assert idempotency.resolve_key("explicit", "evt-1", "1") == "explicit"
    with pytest.raises(IdempotencyKeyMissing):
        idempotency.resolve_key(None, None, "1")


def test_fingerprint_ignores_key_order_but_not_values():
    assert idempotency.fingerprint({"a": 1, "b": 2}) == idempotency.fingerprint({"b": 2, "a": 1})
    assert idempotency.fingerprint({"a": 1}) != idempotency.fingerprint({"a": 2})


def test_scoped_keys_differ_per_caller():
    assert idempotency.scoped_key(CallerId("a"), "k") != idempotency.scoped_key(CallerId("b"), "k")


def test_tokens_are_32_random_bytes_and_only_hashes_compare():
    token = tokens.mint_token()
    assert len(token) == 43 and "=" not in token
    assert tokens.mint_token() != token
    stored = tokens.token_hash(token)
    assert len(stored) == 64 and token not in stored
    assert tokens.hashes_match(stored, token)
    assert not tokens.hashes_match(stored, token[:-1] + ("A" if token[-1] != "A" else "B"))


def test_reset_link_never_uses_request_data():
    assert (
        tokens.reset_link("https://app.example.com/reset?token={token}", "T") == "https://app.example.com/reset?token=T"
    )


def test_transaction_request_token_is_stable_for_retries_and_distinct_otherwise():
    from sendledger.adapters.dynamodb.table import request_token

    put = [{"Put": {"TableName": "t", "Item": {"pk": {"S": "MSG#1"}, "state": {"S": "pending"}}}}]
    same = [{"Put": {"TableName": "t", "Item": {"pk": {"S": "MSG#1"}, "state": {"S": "pending"}}}}]
    later = [{"Put": {"TableName": "t", "Item": {"pk": {"S": "MSG#1"}, "state": {"S": "accepted"}}}}]
    assert request_token(put) == request_token(same)
    assert request_token(put) != request_token(later)
    assert len(request_token(put)) == 36
