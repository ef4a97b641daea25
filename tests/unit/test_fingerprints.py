"""Recipient fingerprints are keyed: a guessed address cannot be confirmed from a log line."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sendledger.domain import recipients
from sendledger.domain.recipients import LOCAL_FINGERPRINT_KEY, Channel, fingerprint_of, parse_recipient
from sendledger.providers.ses.events import parse_sqs_body

KEY = "email:alice@example.com"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "aws-formats"


@pytest.fixture
def deployed_key() -> Iterator[bytes]:
    key = b"k" * 64
    recipients.use_fingerprint_key(key)
    yield key
    recipients.use_fingerprint_key(LOCAL_FINGERPRINT_KEY)


def test_same_address_and_key_give_the_same_fingerprint() -> None:
    assert fingerprint_of(KEY, key=b"one") == fingerprint_of(KEY, key=b"one")
    assert parse_recipient(Channel.EMAIL, "Alice@Example.com").fingerprint == fingerprint_of(KEY)


def test_a_different_key_gives_a_different_fingerprint() -> None:
    assert fingerprint_of(KEY, key=b"one") != fingerprint_of(KEY, key=b"two")
    assert fingerprint_of(KEY, key=b"one") != fingerprint_of("email:bob@example.com", key=b"one")


def test_the_unsalted_sha256_prefix_no_longer_matches() -> None:
    unsalted = hashlib.sha256(KEY.encode()).hexdigest()[:16]
    for key in (LOCAL_FINGERPRINT_KEY, b"one"):
        fingerprint = fingerprint_of(KEY, key=key)
        assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0
        assert fingerprint != unsalted
        assert fingerprint == hmac.new(key, KEY.encode(), hashlib.sha256).hexdigest()[:16]


def test_the_installed_key_reaches_recipients_and_event_ids(deployed_key: bytes) -> None:
    expected = fingerprint_of(KEY, key=deployed_key)
    assert parse_recipient(Channel.EMAIL, "alice@example.com").fingerprint == expected
    (event, *_) = parse_sqs_body(json.dumps(json.loads((FIXTURES / "ses-bounce-permanent.json").read_text())))
    assert event.recipient_key is not None
    assert event.recipient_fingerprint == fingerprint_of(event.recipient_key, key=deployed_key)
    assert event.recipient_fingerprint in event.event_id


def test_an_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        recipients.use_fingerprint_key(b"")
