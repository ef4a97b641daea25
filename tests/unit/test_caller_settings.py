"""Caller settings: the callback URL's textual rules, the flag context's, and the per-container cache."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sendledger.domain.caller_settings import (
    CALLER_SETTINGS_CACHE,
    CallbackUrl,
    CallerSettings,
    Refused,
    UrlRefusal,
    flag_context_problems,
    parse_callback_url,
)
from sendledger.domain.callers import CallerId
from tests.support.fakes import FakeClock
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

A, B = CallerId("a" * 24), CallerId("b" * 24)


@pytest.mark.parametrize(
    ("url", "host", "port", "target"),
    [
        ("https://hooks.example.com/sendledger", "hooks.example.com", 443, "/sendledger"),
        ("https://Hooks.Example.COM.:8443/a?b=c", "hooks.example.com", 8443, "/a?b=c"),
        ("HTTPS://hooks.example.com", "hooks.example.com", 443, "/"),
        ("https://[2606:4700::1]/x", "2606:4700::1", 443, "/x"),
        ("https://203.0.113.9:443/x", "203.0.113.9", 443, "/x"),
    ],
)
def test_a_good_callback_url_is_taken_apart(url: str, host: str, port: int, target: str) -> None:
    parsed = parse_callback_url(url)
    assert isinstance(parsed, CallbackUrl)
    assert (parsed.host, parsed.port, parsed.target, parsed.secure) == (host, port, target, True)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://hooks.example.com/x", UrlRefusal.NOT_HTTPS),
        ("ftp://hooks.example.com/x", UrlRefusal.NOT_HTTPS),
        ("file:///etc/passwd", UrlRefusal.NOT_HTTPS),
        ("hooks.example.com/x", UrlRefusal.NOT_HTTPS),
        ("https:///x", UrlRefusal.NO_HOST),
        ("https://:443/x", UrlRefusal.NO_HOST),
        ("https://user:pw@hooks.example.com/x", UrlRefusal.USERINFO),
        ("https://user@hooks.example.com/x", UrlRefusal.USERINFO),
        ("https://hooks.example.com@10.0.0.1/x", UrlRefusal.USERINFO),
        ("https://hooks.example.com:0/x", UrlRefusal.BAD_PORT),
        ("https://1.1.1.1:22/", UrlRefusal.BAD_PORT),  # the review's: SSH on a public host
        ("https://hooks.example.com:80/x", UrlRefusal.BAD_PORT),
        ("https://hooks.example.com:5432/x", UrlRefusal.BAD_PORT),
        ("https://hooks.example.com:8080/x", UrlRefusal.BAD_PORT),
        ("https://hooks.example.com:65536/x", UrlRefusal.BAD_PORT),
        ("https://hooks.example.com:https/x", UrlRefusal.BAD_PORT),
        ("https://hooks.example.com/x#frag", UrlRefusal.FRAGMENT),
        ("https://hooks.example.com/a b", UrlRefusal.MALFORMED),
        ("https://hooks.example.com/\r\nHost: evil", UrlRefusal.MALFORMED),
        ("https://[::1/x", UrlRefusal.MALFORMED),
        ("https://hooks.example.com/" + "x" * 2048, UrlRefusal.TOO_LONG),
    ],
)
def test_a_bad_callback_url_is_refused_with_its_reason(url: str, reason: UrlRefusal) -> None:
    refused = parse_callback_url(url)
    assert isinstance(refused, Refused) and refused.reason is reason, refused


def test_http_only_where_the_local_stack_allows_it() -> None:
    assert isinstance(parse_callback_url("http://127.0.0.1:9000/hook"), Refused)
    local = parse_callback_url("http://127.0.0.1:9000/hook", allow_http=True)
    assert isinstance(local, CallbackUrl) and not local.secure and local.host_header == "127.0.0.1:9000"


def test_the_flag_context_names_no_key_sendledger_sets() -> None:
    assert flag_context_problems({"plan": "gold", "region_group": "eu"}) == []
    assert flag_context_problems({"caller": "x"}) == ["'caller' is set by sendledger"]
    assert flag_context_problems({"caller_bucket": "1"}) == ["'caller_bucket' is set by sendledger"]
    assert len(flag_context_problems({"Plan": "x", "p": "y" * 257})) == 2
    assert flag_context_problems({f"k{i}": "v" for i in range(17)}) == ["at most 16 entries"]


def test_a_caller_without_an_item_has_the_defaults() -> None:
    store = FakeCallerSettings(LedgerState(), FakeClock())
    assert store.get(A) == CallerSettings(A) == CallerSettings(A, None, False)
    assert store.get(A).version == 0 and store.get(A).callback_url is None and not store.get(A).test_mode


def test_the_cache_answers_for_its_ttl_and_a_container_sees_its_own_writes_at_once() -> None:
    clock = FakeClock()
    writer = FakeCallerSettings(LedgerState(), clock)
    reader = writer.container()
    assert reader.get(A).callback_url is None and reader.reads == 1
    stored = writer.put(replace(CallerSettings(A), callback_url="https://a.example/hook", updated_at=clock.now()))
    assert stored.version == 1 and writer.get(A) == stored and writer.reads == 0
    assert reader.get(A).callback_url is None  # another container's cache: stale, at most the TTL
    clock.advance(CALLER_SETTINGS_CACHE.total_seconds())
    assert reader.get(A) == stored and reader.reads == 2
    assert reader.get(B) == CallerSettings(B)
    assert writer.put(replace(stored, test_mode=True)).version == 2
