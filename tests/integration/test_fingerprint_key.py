"""Deployed, the fingerprint key is the stack's Secrets Manager secret, read once per container."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import boto3
import pytest

from sendledger import bootstrap, names
from sendledger.adapters.secrets import fingerprint_key
from sendledger.domain import recipients
from sendledger.domain.recipients import LOCAL_FINGERPRINT_KEY, Channel, fingerprint_of, parse_recipient
from tests.conftest import TABLE

SECRET = "x7Qm2kTz" * 8


@pytest.fixture
def container(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    arn = boto3.client("secretsmanager").create_secret(Name="fingerprint-key-test", SecretString=SECRET)["ARN"]
    monkeypatch.setenv(names.ENV_LEDGER_TABLE, TABLE)
    monkeypatch.setenv(names.ENV_FINGERPRINT_SECRET_ARN, arn)
    bootstrap.runtime.cache_clear()
    yield arn
    bootstrap.runtime.cache_clear()
    recipients.use_fingerprint_key(LOCAL_FINGERPRINT_KEY)


def test_the_composition_root_keys_fingerprints_with_the_secret(container: str) -> None:
    bootstrap.runtime()
    recipient = parse_recipient(Channel.EMAIL, "alice@example.com")
    expected = hmac.new(SECRET.encode(), recipient.key.encode(), hashlib.sha256).hexdigest()[:16]
    assert recipient.fingerprint == expected
    # Read once: the container keeps its key even if the secret becomes unreadable
    boto3.client("secretsmanager").delete_secret(SecretId=container, ForceDeleteWithoutRecovery=True)
    bootstrap.runtime()
    assert fingerprint_of(recipient.key) == expected


def test_without_a_secret_the_local_only_key_is_used() -> None:
    assert fingerprint_key("") == LOCAL_FINGERPRINT_KEY
