"""Caller settings as admins change them: the URL checked at registration and again before each
POST, the first secret with the first URL, and a rotation with two valid secrets."""

from __future__ import annotations

import json

from sendledger.domain.callback_schedule import CircuitBreakers, Queued
from sendledger.domain.callbacks import SECRET_CACHE, SigningKeys, verify
from sendledger.domain.callers import CallerId
from sendledger.ports.sms_usage import SmsUsageInMemory
from sendledger.usecases.callbacks import CallbackPolicy, Delivery, Receivers, deliver_callback
from sendledger.usecases.callers import (
    CallerAdmin,
    CallerView,
    Invalid,
    NoSecret,
    RotationTooRecent,
    SettingsChange,
    change_caller,
    end_rotation,
    rotate_secret,
    show_caller,
)
from tests.support.fakes import FakeClock
from tests.unit.fakes.callbacks import ACCOUNT, FakeCallbackQueue, FakeResolver, FakeSecrets, RecordingEndpoint
from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.state import LedgerState

A = CallerId("a" * 24)
ACTOR = "arn:aws:iam::123456789012:role/admin"
HOOK = "https://hooks.example.com/sendledger"


def admin_world(resolver: FakeResolver | None = None) -> tuple[CallerAdmin, FakeClock]:
    clock = FakeClock()
    resolver = resolver or FakeResolver().answer("hooks.example.com", "93.184.215.14")
    admin = CallerAdmin(
        FakeCallerSettings(LedgerState(), clock), FakeSecrets(), resolver, clock, SmsUsageInMemory(), None
    )
    return admin, clock


def bus_event(owner: CallerId, event_id: str = "e-1") -> str:
    detail = {"event_id": event_id, "message_id": "m", "state": "accepted", "caller_id": owner}
    return json.dumps(
        {
            "detail-type": "sendledger.message.state-changed",
            "source": "sendledger",
            "account": ACCOUNT,
            "time": "2026-01-01T00:00:00Z",
            "detail": detail,
        }
    )


def deliver(event: str, receivers: Receivers, clock: FakeClock, queue: FakeCallbackQueue | None = None):
    return deliver_callback(
        Queued(event),
        account_id=ACCOUNT,
        policy=CallbackPolicy(1, 3, 10),
        receivers=receivers,
        queue=queue or FakeCallbackQueue(),
        clock=clock,
    )


def test_the_first_url_brings_the_first_secret_shown_once() -> None:
    admin, clock = admin_world()
    view = change_caller(admin, A, SettingsChange(callback_url=HOOK), ACTOR)
    assert isinstance(view, CallerView) and view.new_secret is not None and len(view.new_secret) >= 43
    assert view.settings.callback_url == HOOK and view.settings.updated_by == ACTOR and view.settings.version == 1
    assert view.secret.configured and not view.secret.rotating
    again = change_caller(admin, A, SettingsChange(test_mode=True), ACTOR)
    assert isinstance(again, CallerView) and again.new_secret is None  # never shown again
    assert again.settings.callback_url == HOOK and again.settings.test_mode  # a field left out keeps its value
    assert show_caller(admin, A).new_secret is None
    assert view.new_secret not in repr(view) and view.new_secret not in repr(admin.secrets.keys(A))


def test_a_url_that_resolves_inside_is_refused_at_registration() -> None:
    resolver = FakeResolver().answer("hooks.example.com", "93.184.215.14", "10.1.2.3")
    admin, _ = admin_world(resolver.answer("metadata.example.com", "169.254.169.254"))
    for url in (HOOK, "https://metadata.example.com/x", "https://[::1]/x", "https://127.0.0.1/x", "http://x.example/"):
        refused = change_caller(admin, A, SettingsChange(callback_url=url), ACTOR)
        assert isinstance(refused, Invalid) and refused.field == "callback_url", url
    nowhere = change_caller(admin, A, SettingsChange(callback_url="https://nxdomain.example/x"), ACTOR)
    assert isinstance(nowhere, Invalid) and nowhere.messages[0].startswith("unresolved")
    assert show_caller(admin, A).settings.version == 0 and admin.secrets.keys(A) is None  # nothing written


def test_a_bad_flag_context_is_refused_and_null_url_ends_callbacks() -> None:
    admin, _ = admin_world()
    refused = change_caller(admin, A, SettingsChange(flag_context={"caller": "x"}), ACTOR)
    assert isinstance(refused, Invalid) and refused.field == "flag_context"
    change_caller(admin, A, SettingsChange(callback_url=HOOK, flag_context={"plan": "gold"}), ACTOR)
    off = change_caller(admin, A, SettingsChange(callback_url=None), ACTOR)
    assert isinstance(off, CallerView) and off.settings.callback_url is None
    assert off.settings.flag_context == {"plan": "gold"} and off.secret.configured  # the secret stays


def test_during_a_rotation_a_receiver_with_either_secret_verifies_and_with_neither_it_fails() -> None:
    admin, clock = admin_world()
    first = change_caller(admin, A, SettingsChange(callback_url=HOOK), ACTOR)
    assert isinstance(first, CallerView) and first.new_secret
    rotated = rotate_secret(admin, A, ACTOR)
    assert rotated.new_secret and rotated.secret.rotating and rotated.secret.rotated_at == clock.now()
    endpoint = RecordingEndpoint()
    receivers = Receivers(admin.store, admin.secrets, admin.resolver, endpoint, CircuitBreakers())
    attempt = deliver(bus_event(A), receivers, clock)
    assert attempt.outcome is Delivery.DELIVERED
    [post] = endpoint.posts
    header, now = post.headers["Sendledger-Signature"], int(clock.now().timestamp())
    assert header.count("v1=") == 2
    assert verify(first.new_secret, header, post.body, now) and verify(rotated.new_secret, header, post.body, now)
    assert not verify("neither", header, post.body, now)
    # Ending it at once is refused: a callbacks container may still sign with the old secret alone
    too_soon = end_rotation(admin, A, ACTOR)
    assert isinstance(too_soon, RotationTooRecent) and too_soon.retry_after_seconds == SECRET_CACHE.total_seconds()
    clock.advance(SECRET_CACHE.total_seconds())
    ended = end_rotation(admin, A, ACTOR)
    assert isinstance(ended, CallerView) and not ended.secret.rotating and ended.new_secret is None
    deliver(bus_event(A, "e-2"), receivers, clock)
    header, now = endpoint.posts[-1].headers["Sendledger-Signature"], int(clock.now().timestamp())
    assert header.count("v1=") == 1 and verify(rotated.new_secret, header, endpoint.posts[-1].body, now)
    assert not verify(first.new_secret, header, endpoint.posts[-1].body, now)


def test_rotating_twice_keeps_two_secrets_and_ending_without_a_secret_is_no_secret() -> None:
    admin, _ = admin_world()
    assert isinstance(end_rotation(admin, A, ACTOR), NoSecret)
    one = rotate_secret(admin, A, ACTOR)  # no secret yet: the first, nothing to rotate from
    assert one.new_secret and not one.secret.rotating
    two, three = rotate_secret(admin, A, ACTOR), rotate_secret(admin, A, ACTOR)
    assert admin.secrets.keys(A) == SigningKeys(three.new_secret or "", two.new_secret, admin.clock.now())


def test_dns_that_answers_inside_at_connect_time_gets_no_post() -> None:
    # Given a host that resolved to a public address when the admin registered it
    resolver = FakeResolver().answer("hooks.example.com", "93.184.215.14").answer("hooks.example.com", "10.0.0.5")
    admin, clock = admin_world(resolver)
    assert isinstance(change_caller(admin, A, SettingsChange(callback_url=HOOK), ACTOR), CallerView)
    # When it answers a private address at connect time (a rebind)
    endpoint, retries = RecordingEndpoint(), FakeCallbackQueue()
    receivers = Receivers(admin.store, admin.secrets, resolver, endpoint, CircuitBreakers())
    attempt = deliver(bus_event(A), receivers, clock, retries)
    # Then nothing is POSTed; the attempt failed and is retried with backoff
    assert endpoint.posts == [] and resolver.asked == ["hooks.example.com", "hooks.example.com"]
    assert attempt.outcome is Delivery.RETRYING and attempt.refused == "not-public" and retries.delays == [1]
