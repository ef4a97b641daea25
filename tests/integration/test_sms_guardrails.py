"""SMS guardrails through the api handler (moto): a caller's countries, its daily cap counted by
the publisher from the ledger's stream, the segments every SMS records, and the evidence of a
refusal (a problem, a metric, a log line, the settings' history; never an item)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sendledger.domain.clock import iso
from sendledger.domain.sms_guardrails import seconds_to_next_day
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import ADMIN, CALLER, FakeClock
from tests.support.status_out import by_message, status_out_harness
from tests.support.templates import warm_templates

GB, US, IE = "+447400123456", "+12015550123", "+353850123456"
PROBLEM = "application/problem+json"


def sms(api: Any, to: str, key: str, summary: str = "disk full") -> tuple[int, dict[str, str], Any]:
    body = {"channel": "sms", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": summary}}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})


def set_rules(api: Any, **body: Any) -> dict[str, Any]:
    status, _, view = api("PUT", f"/v1/admin/callers/{CALLER}", body)
    assert status == 200, view
    return view  # type: ignore[no-any-return]


def table_items(api: Any) -> int:
    return len(api.runtime.ledger.table.client.scan(TableName=api.runtime.ledger.table.name)["Items"])


def test_a_caller_allowed_gb_only_gets_422_for_a_us_number_with_no_request_and_202_for_gb(
    api: Any, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    view = set_rules(api, sms_countries={"allow": ["gb"]}, reason="pumping from the reset form")
    assert view["sms_countries"] == {"allow": ["GB"]}
    (change,) = view["history"]
    assert change["actor"] == ADMIN and change["reason"] == "pumping from the reset form"
    assert change["changed"] == {"sms_countries": {"allow": ["GB"]}}
    items = table_items(api)
    api.services.caller_settings.get(CALLER)  # the container's cached read, as every send has it
    warm_templates(api)  # and its caller's template listing, within its cache period
    capsys.readouterr()
    with count_dynamodb_requests() as counted:
        status, headers, problem = sms(api, US, "k-us")
    assert status == 422 and headers["content-type"] == PROBLEM
    assert problem["type"].endswith("/sms-country-not-allowed")
    assert "US" in problem["detail"] and "allow GB" in problem["detail"]
    assert counted.total == 0  # decided from the cached settings: no DynamoDB request at all
    assert table_items(api) == items  # no item per refusal
    logged = capsys.readouterr().out
    assert US not in logged and all(US not in record.getMessage() for record in caplog.records)
    (line,) = [vars(record) for record in caplog.records if record.getMessage() == "sms refused"]
    assert (line["caller_id"], line["country"], line["rule"], line["reason"]) == (
        CALLER,
        "US",
        "allow GB",
        "country-not-allowed",
    )
    metrics = [json.loads(text) for text in logged.splitlines() if "_aws" in text]
    refused = [m for m in metrics if "SmsRefused" in m]
    assert {m.get("reason") for m in refused} == {"country-not-allowed", None}  # by reason, and in total
    status, _, accepted = sms(api, GB, "k-gb")
    assert status == 202 and accepted["state"] == "accepted"


def test_a_block_rule_and_the_deployments_default(api: Any) -> None:
    set_rules(api, sms_countries={"block": ["US"]})
    assert sms(api, US, "k-1")[0] == 422
    assert sms(api, IE, "k-2")[0] == 202
    # null: the caller's rule is gone, the deployment's default (every country here) holds again
    view = set_rules(api, sms_countries=None, reason="lifted")
    assert view["sms_countries"] is None and [c["changed"] for c in view["history"]][-1] == {"sms_countries": None}
    api.services.settings = api.services.settings.replace({"sms_allowed_countries": frozenset({"IE"})})
    status, _, problem = sms(api, US, "k-3")
    assert status == 422 and "this deployment's default rule (allow IE)" in problem["detail"]
    assert sms(api, IE, "k-4")[0] == 202


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sms_countries": {"allow": ["GBR"]}}, "sms_countries"),
        ({"sms_countries": {"deny": ["GB"]}}, "sms_countries"),
        ({"sms_countries": {"allow": ["GB"], "block": ["US"]}}, "sms_countries"),
        ({"sms_daily_segments": 0}, "sms_daily_segments"),
        ({"sms_daily_segments": "20"}, "sms_daily_segments"),
    ],
)
def test_a_malformed_rule_is_a_400_naming_its_field(api: Any, body: dict[str, Any], field: str) -> None:
    status, headers, problem = api("PUT", f"/v1/admin/callers/{CALLER}", body)
    assert status == 400 and headers["content-type"] == PROBLEM
    assert any(error["field"].startswith(field) for error in problem["errors"]), problem


def test_the_cap_refuses_after_its_segments_until_the_next_utc_day(api: Any, clock: FakeClock) -> None:
    set_rules(api, sms_daily_segments=3)
    for number in range(3):
        assert sms(api, GB, f"k-{number}")[0] == 202
    status, headers, problem = sms(api, GB, "k-3")
    assert status == 429 and problem["type"].endswith("/sms-cap-reached")
    assert int(headers["retry-after"]) == seconds_to_next_day(clock.now())
    # a retry of a request that was sent gets its stored answer, not the refusal
    status, headers, replay = sms(api, GB, "k-2")
    assert status == 202 and headers["idempotent-replayed"] == "true"
    # the next UTC day counts from zero
    clock.current = (clock.now() + timedelta(days=1)).replace(hour=0, minute=0, second=1)
    assert sms(api, GB, "k-4")[0] == 202


def test_other_containers_see_the_count_the_publisher_wrote_from_the_stream(api: Any, clock: FakeClock) -> None:
    pump, _ = status_out_harness(api.services.settings)
    set_rules(api, sms_daily_segments=4)
    long_text = "x" * 200  # GSM-7, 200 septets: 2 segments
    for number in range(2):
        status, _, view = sms(api, GB, f"k-{number}", long_text)
        assert status == 202 and view["sms"] == {"encoding": "GSM-7", "segments": 2}
    pump.pump()
    today = clock.now().astimezone(UTC).strftime("%Y-%m-%d")
    assert api.runtime.ledger.sms_usage.segments_on(CALLER, today) == 4
    # a second container, which admitted nothing itself, reads the publisher's count: the part
    # replaced, the runtime builds its flows (and their cap) anew
    api.runtime.sms_usage = api.runtime.ledger.sms_usage
    assert sms(api, GB, "k-2")[0] == 429
    pump.pump()  # the stream again: nothing new was sent, nothing more is counted
    assert api.runtime.ledger.sms_usage.segments_on(CALLER, today) == 4
    status, _, caller = api("GET", f"/v1/admin/callers/{CALLER}")
    assert caller["sms_daily_segments"] == 4 and caller["sms_segments_today"] == 4


def test_a_200_character_unicode_text_records_ucs2_and_three_segments_everywhere(api: Any) -> None:
    pump, _ = status_out_harness(api.services.settings)
    summary = "Ünïcödé ⚠ " * 19 + "✓" * 3  # with "ALERT: ", 200 characters, none of them GSM-7's Ü
    assert len("ALERT: " + summary) == 200
    status, _, view = sms(api, GB, "k-unicode", summary)
    assert status == 202 and view["sms"] == {"encoding": "UCS-2", "segments": 3}
    status, _, read = api("GET", f"/v1/messages/{view['message_id']}")
    assert read["sms"] == {"encoding": "UCS-2", "segments": 3}
    intent = read["history"][0]
    assert (intent["type"], intent["sms_encoding"], intent["sms_segments"]) == ("intent", "UCS-2", 3)
    pump.pump()
    events = by_message(pump.events, view["message_id"])
    assert events and all(e["detail"]["sms"] == {"encoding": "UCS-2", "segments": 3} for e in events)
    day = datetime.fromisoformat(view["created_at"].replace("Z", "+00:00")).replace(hour=0, minute=0, second=0)
    window = {"since": iso(day), "until": iso(day + timedelta(days=1))}
    status, _, text = api.raw("GET", "/v1/evidence", query=window)
    (exported,) = [json.loads(line) for line in text.splitlines()]
    assert status == 200 and exported["sms"] == {"encoding": "UCS-2", "segments": 3}
    assert exported["history"][0]["sms_segments"] == 3


def test_an_email_has_no_segments(api: Any) -> None:
    body = {"channel": "email", "to": "a@example.com", "template": {"id": "alert", "version": "1"}}
    body["params"] = {"summary": "s"}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": "k-mail"})
    assert status == 202 and "sms" not in view


def test_an_sms_escalation_without_a_deadline_takes_its_countrys_and_an_emails_must_name_one(api: Any) -> None:
    fallback = {"fallback": [{"channel": "email", "to": "oncall@example.com"}]}
    body = {"channel": "sms", "to": GB, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", {**body, "escalation": fallback}, headers={"Idempotency-Key": "e1"})
    assert status == 202
    stored = api.services.messages.get(view["message_id"])
    assert stored.escalation.deadline_seconds == api.services.settings.sms_timing(GB).escalation_deadline_seconds == 300
    email = {**body, "channel": "email", "to": "a@example.com", "escalation": fallback}
    status, _, problem = api("POST", "/v1/messages", email, headers={"Idempotency-Key": "e2"})
    assert status == 400 and problem["errors"][0]["field"] == "escalation.deadline_seconds"
