"""Evidence routes through the real handler against moto: find by key, export by window, caller scope."""

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from sendledger.domain.clock import iso
from sendledger.domain.idempotency import derive_key
from sendledger.handlers import api as api_module
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import ADMIN, FakeLambdaContext, api_event

ALERT = {
    "channel": "email",
    "to": "alice@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "disk full"},
}


def send(api, key, to="alice@example.com", **kwargs):
    return api("POST", "/v1/messages", {**ALERT, "to": to}, headers={"Idempotency-Key": key}, **kwargs)


def raw(api, path, query, principal=None):
    """The handler's answer as text (NDJSON is not one JSON document)."""
    kwargs = {"principal": principal} if principal else {}
    response = api_module.lambda_handler(
        api_event("GET", path, query=query, **kwargs), FakeLambdaContext(), api.runtime
    )
    headers = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
    headers.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
    return response["statusCode"], headers, response.get("body") or ""


def export_all(api, since, until, limit, principal=None):
    """Every page, following Link: rel="next"; the lines and the number of pages."""
    query = {"since": iso(since), "until": iso(until), "limit": str(limit)}
    lines, pages = [], 0
    while pages < 50:  # a cursor that never moves on fails here, not by hanging
        status, headers, body = raw(api, "/v1/evidence", query, principal)
        assert status == 200 and headers["content-type"] == "application/x-ndjson", body
        pages += 1
        lines += [json.loads(line) for line in body.splitlines()]
        link = headers.get("link")
        if link is None:
            return lines, pages
        target, rel = link.split(";", 1)
        assert rel.strip() == 'rel="next"' and target.startswith("<evidence?")
        query = {name: values[0] for name, values in parse_qs(urlsplit(target.strip("<>")).query).items()}
    raise AssertionError("the export never ended")


def test_find_by_idempotency_key_and_by_event_id(api, healthy_watermarks):
    _, _, sent = send(api, "order-1")
    status, _, found = api("GET", "/v1/messages", query={"idempotency_key": "order-1"})
    assert status == 200 and found["message_id"] == sent["message_id"]
    assert [entry["type"] for entry in found["history"]][:2] == ["intent", "provider_outcome"]
    # The quoted Structured Field form names the same key
    assert api("GET", "/v1/messages", query={"idempotency_key": '"order-1"'})[2]["message_id"] == sent["message_id"]
    # An event_id send is found by its event id and template version
    body = {**ALERT, "event_id": "evt-9"}
    _, _, by_event = api("POST", "/v1/messages", body)
    status, _, found = api("GET", "/v1/messages", query={"event_id": "evt-9", "template_version": "1"})
    assert status == 200 and found["message_id"] == by_event["message_id"]
    key = derive_key("evt-9", "1")
    assert api("GET", "/v1/messages", query={"idempotency_key": key})[2]["message_id"] == by_event["message_id"]


def test_find_is_caller_scoped_and_a_miss_is_404(api, healthy_watermarks):
    send(api, "order-1")
    assert api("GET", "/v1/messages", query={"idempotency_key": "order-1"}, principal=ADMIN)[0] == 404
    status, headers, problem = api("GET", "/v1/messages", query={"idempotency_key": "never-used"})
    assert status == 404 and headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"idempotency_key": "k", "event_id": "e", "template_version": "1"},
        {"event_id": "e"},
        {"template_version": "1"},
        {"idempotency_key": "caf\u00e9"},
    ],
)
def test_find_needs_exactly_one_valid_form(api, query):
    status, headers, problem = api("GET", "/v1/messages", query=query)
    assert status == 400 and headers["content-type"] == "application/problem+json", problem


def test_find_returns_the_newest_generation_of_a_reused_key(api, clock, healthy_watermarks, settings):
    _, _, first = send(api, "monthly")
    clock.advance(timedelta(days=settings.idempotency_retention_days, seconds=1).total_seconds())
    _, _, second = send(api, "monthly")
    assert second["message_id"] != first["message_id"]
    assert api("GET", "/v1/messages", query={"idempotency_key": "monthly"})[2]["message_id"] == second["message_id"]


def test_export_pages_through_the_window_once_each_oldest_first(api, clock, healthy_watermarks):
    # Given seven sends over three UTC days, two in the same millisecond, and one outside the window
    start = clock.now()
    sent = []
    for index in range(7):
        sent.append(send(api, f"k-{index}", to=f"user{index}@example.com")[2]["message_id"])
        if index != 2:
            clock.advance(9 * 3600)
    until = clock.now()
    send(api, "at-the-end")
    # When the caller exports the window three at a time
    with count_dynamodb_requests() as counter:
        lines, pages = export_all(api, start, until, 3)
    # Then every message of the window once, oldest first, each with its history; no scan
    ids = [line["message_id"] for line in lines]
    assert len(ids) == len(sent) and set(ids) == set(sent)
    assert ids[:2] == sent[:2] and ids[4:] == sent[4:]  # the two of one millisecond in either order
    assert pages >= 3 and all(line["history"] for line in lines)
    assert "Scan" not in counter.operations
    created = [line["created_at"] for line in lines]
    assert created == sorted(created)


def test_export_is_caller_scoped(api, clock, healthy_watermarks):
    start = clock.now()
    send(api, "mine")
    send(api, "theirs", principal=ADMIN)
    clock.advance(1)
    mine, _ = export_all(api, start, clock.now(), 10)
    theirs, _ = export_all(api, start, clock.now(), 10, principal=ADMIN)
    assert len(mine) == 1 and len(theirs) == 1 and mine[0]["message_id"] != theirs[0]["message_id"]


def test_export_window_end_is_exclusive(api, clock, healthy_watermarks):
    start = clock.now()
    send(api, "at-start")
    lines, _ = export_all(api, start, start + timedelta(milliseconds=1), 10)
    assert len(lines) == 1
    assert export_all(api, start - timedelta(hours=1), start, 10)[0] == []


@pytest.mark.parametrize(
    "query",
    [
        {"since": "2026-01-01T00:00:00Z"},
        {"since": "yesterday", "until": "2026-01-02T00:00:00Z"},
        {"since": "2026-01-01T00:00:00", "until": "2026-01-02T00:00:00"},  # no time zone
        {"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
        {"since": "2026-01-01T00:00:00Z", "until": "2026-02-01T00:00:01Z"},  # over 31 days
        {"since": "2026-01-01T00:00:00Z", "until": "2026-01-02T00:00:00Z", "limit": "0"},
        {"since": "2026-01-01T00:00:00Z", "until": "2026-01-02T00:00:00Z", "limit": "1001"},
        {"since": "2026-01-01T00:00:00Z", "until": "2026-01-02T00:00:00Z", "cursor": "not-a-cursor"},
        {"since": "2026-01-01T00:00:00Z", "until": "2026-01-02T00:00:00Z", "cursor": "eyJ0IjoxfQ"},
    ],
)
def test_bad_ranges_limits_and_cursors_are_400(api, query):
    status, headers, body = raw(api, "/v1/evidence", query)
    assert status == 400 and headers["content-type"] == "application/problem+json", body
    assert json.loads(body)["status"] == 400


def test_a_cursor_from_another_window_is_400(api, clock, healthy_watermarks):
    start = clock.now()
    for index in range(3):
        send(api, f"k-{index}")
        clock.advance(1)
    query = {"since": iso(start), "until": iso(clock.now()), "limit": "1"}
    _, headers, _ = raw(api, "/v1/evidence", query)
    cursor = parse_qs(urlsplit(headers["link"].split(";")[0].strip("<>")).query)["cursor"][0]
    later = {"since": iso(start + timedelta(seconds=5)), "until": iso(clock.now() + timedelta(hours=1))}
    status, _, _ = raw(api, "/v1/evidence", {**later, "cursor": cursor})
    assert status == 400
