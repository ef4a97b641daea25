"""Message items written before the compact encoding read back exactly as they did."""

import json
from dataclasses import replace

from sendledger.adapters.dynamodb import history
from sendledger.adapters.dynamodb.expressions import encode_item
from sendledger.adapters.dynamodb.message_items import message_from, record_from
from sendledger.domain.messages import HistoryType

OLD = {
    "pk": "MSG#msg_01TESTOLDITEM0000000000000",
    "sk": "MSG",
    "channel": "email",
    "recipient": "ann@example.com",
    "template_id": "notice",
    "template_version": "1",
    "category": "alert",
    "created_at": "2026-01-01T00:00:00.000Z",
    "updated_at": "2026-01-01T00:00:01.000Z",
    "state": "accepted",
    "owner": "0123456789abcdef01234567",
    "params": json.dumps({"subject": "s", "body": "b"}),
    "attempt": 1,
    "provider_message_id": "ses-1",
    "idem_key": "0123456789abcdef01234567#k",
    "idem_fingerprint": "f" * 32,
    "idem_expires_at": 1769904000,
    "response": json.dumps({"s": "accepted", "u": "2026-01-01T00:00:01.000Z", "p": True}),
    "h:1767225600000.00.AAAAAAAAAAAA": json.dumps(
        {"t": "intent", "s": "sending", "e": {"eligibility": "eligible", "suppression_version": 0}}
    ),
    "h:1767225601000.01.BBBBBBBBBBBB": json.dumps(
        {"t": "provider_outcome", "s": "accepted", "e": {"provider_message_id": "ses-1", "attempts": 1}}
    ),
}


def test_an_old_item_reads_back_whole():
    item = encode_item(OLD)
    message = message_from(item)
    assert (message.category, message.owner, message.params) == ("alert", OLD["owner"], {"subject": "s", "body": "b"})
    record = record_from(item)
    assert record is not None and record.response is not None
    assert record.response.message.updated_at.isoformat() == "2026-01-01T00:00:01+00:00"
    entries = history.in_order(history.entries_of(item))
    assert [e.type for e in entries] == [HistoryType.INTENT, HistoryType.PROVIDER_OUTCOME]
    assert entries[0].evidence == {"eligibility": "eligible", "suppression_version": 0}
    assert entries[1].evidence == {"provider_message_id": "ses-1", "attempts": 1}


def test_a_compact_entry_reads_back_under_its_names():
    entry = history.entries_of(encode_item(OLD))[1][1]
    name, value = history.encoded(entry, within="ses-1")
    assert len(value) < len(OLD["h:1767225601000.01.BBBBBBBBBBBB"])
    back = dict(history.entries_of({**encode_item(OLD), name: {"S": value}}))
    assert back[name.removeprefix("h:")].evidence == entry.evidence


def test_an_item_without_a_provider_was_carried_by_its_channels_first_provider():
    """Items written before providers were selectable name none: email was SES's, SMS SNS's. The
    registry's order says so now, so reordering it must fail here, not reassign old messages."""
    assert message_from(encode_item(OLD)).provider == "ses"
    sms = {**OLD, "channel": "sms", "recipient": "+12065550100"}
    assert message_from(encode_item(sms)).provider == "sns"
    assert message_from(encode_item({**OLD, "provider": "mailgun"})).provider == "mailgun"


def test_an_sms_first_entry_keeps_its_template_hash_and_segments_apart():
    """The template's hash (its own code) and the SMS's encoding and segments (codes of their own,
    beside the grace's) were added on two branches: each must read back as itself."""
    codes = [*history.EVIDENCE_CODES.values(), history.TEMPLATE_CODE]
    assert len(codes) == len(set(codes))
    digest = "ab" * 32
    evidence = {
        "eligibility": "eligible",
        "grace_seconds": 30,
        "template": {"id": "notice", "version": "1", "sha256": digest},
        "sms_encoding": "GSM-7",
        "sms_segments": 2,
    }
    entry = history.entries_of(encode_item(OLD))[0][1]
    name, value = history.encoded(replace(entry, evidence=evidence))
    assert len(json.loads(value)["e"]) == len(evidence)
    back = dict(history.entries_of({**encode_item(OLD), name: {"S": value}}))
    assert back[name.removeprefix("h:")].evidence == evidence
