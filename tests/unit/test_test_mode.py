"""Test mode's keys and ids (domain/test_mode.py) and how a message item carries it."""

from datetime import UTC, datetime

from sendledger.adapters.dynamodb.expressions import encode_item
from sendledger.adapters.dynamodb.message_items import message_from
from sendledger.domain import test_mode
from sendledger.domain.events import DeliveryEvent, EventKind
from tests.unit.test_item_codec_compat import OLD

CALLER = "0123456789abcdef01234567"
AT = datetime(2026, 12, 3, tzinfo=UTC)


def test_a_test_callers_keys_and_ids_name_the_caller_and_nothing_else_does():
    key = test_mode.recipient_key(CALLER, "email:bob@example.com")
    assert key == f"test:{CALLER}:email:bob@example.com" and test_mode.is_test_key(key)
    assert test_mode.real_key(key) == "email:bob@example.com" == test_mode.real_key("email:bob@example.com")
    assert not test_mode.is_test_key("email:test:x@example.com")
    simulated = test_mode.simulated_provider_id(CALLER, "abc123")
    assert test_mode.caller_of(simulated) == CALLER
    for real in ("0100018c-EXAMPLE-000000", "sendledger-test", "sendledger-test.x", None, ""):
        assert test_mode.caller_of(real) is None


def event(provider_message_id: str) -> DeliveryEvent:
    return DeliveryEvent("ses", "e-1", EventKind.BOUNCE, AT, "email:bob@example.com", "msg_1", provider_message_id)


def test_ingestion_scopes_only_a_simulated_sends_events():
    scoped = test_mode.scoped(event(test_mode.simulated_provider_id(CALLER, "u1")))
    assert scoped.recipient_key == f"test:{CALLER}:email:bob@example.com" and scoped.evidence["test"] is True
    assert test_mode.scoped(scoped) == scoped  # once
    real = event("0100018c-EXAMPLE-000000")
    assert test_mode.scoped(real) is real


def test_a_message_item_says_test_only_when_true_and_derives_the_callers_key():
    real = message_from(encode_item(OLD))
    assert not real.test and real.recipient_key == "email:ann@example.com"
    marked = message_from(encode_item({**OLD, "test": True}))
    assert marked.test and marked.recipient_key == f"test:{OLD['owner']}:email:ann@example.com"


def test_status_events_say_test_and_name_the_real_address():
    from dataclasses import replace

    from sendledger.domain.state_changes import message_state_changed, suppression_changed

    marked = message_from(encode_item({**OLD, "test": True}))
    assert message_state_changed(marked, None, write="w", occurred_at=AT).detail["test"] is True
    assert "test" not in message_state_changed(replace(marked, test=False), None, write="w", occurred_at=AT).detail
    key = test_mode.recipient_key(CALLER, "email:bob@example.com")
    detail = suppression_changed(key, suppressed=True, reason="r", version=1, actor="a", occurred_at=AT).detail
    assert detail["recipient"] == "bob@example.com" and detail["test"] is True and detail["caller_id"] == CALLER
    real = suppression_changed(
        "email:bob@example.com", suppressed=True, reason="r", version=1, actor="a", occurred_at=AT
    )
    assert real.detail["recipient"] == "bob@example.com" and "test" not in real.detail
