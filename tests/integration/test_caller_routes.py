"""Per-caller settings through the api handler (moto): admins set a caller's callback URL and
rotate its secret; callers' status events reach their own receiver and nobody else's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
from sendledger.domain.callbacks import SECRET_CACHE, verify
from sendledger.domain.callers import caller_of
from sendledger.usecases.callers import CallerAdmin
from tests.support.fakes import ADMIN, CALLER, PRINCIPAL, FakeClock
from tests.support.status_out import status_out_harness
from tests.unit.fakes.callbacks import FakeResolver, RecordingEndpoint

B_PRINCIPAL = "arn:aws:iam::123456789012:user/other-app"
B_CALLER = caller_of(B_PRINCIPAL, {}).id
HOOK_A, HOOK_B = "https://a.hooks.example/sendledger", "https://b.hooks.example/events"
PROBLEM = "application/problem+json"


def dns() -> FakeResolver:
    resolver = FakeResolver()
    resolver.answer("a.hooks.example", "93.184.215.14")
    resolver.answer("b.hooks.example", "2606:4700:4700::1111")
    resolver.answer("inside.hooks.example", "93.184.215.14", "10.0.0.5")
    return resolver


@pytest.fixture
def admin_api(api: Any, clock: FakeClock) -> Any:
    """The api with the admin routes' DNS answered by a fake resolver (no network)."""
    settings = api.services.settings
    api.runtime.caller_admin = CallerAdmin(
        store=api.services.caller_settings,
        secrets=SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock),
        resolver=dns(),
        clock=clock,
        sms_usage=api.runtime.ledger.sms_usage,
        sms_default_countries=settings.sms_default_countries,
    )
    return api


def put(api: Any, caller: str, body: dict[str, Any], principal: str = ADMIN) -> tuple[int, dict[str, str], Any]:
    return api("PUT", f"/v1/admin/callers/{caller}", body, principal=principal)


def test_an_admin_sets_a_callers_url_and_gets_its_secret_once(admin_api: Any) -> None:
    status, headers, view = put(admin_api, CALLER, {"callback_url": HOOK_A, "test_mode": True})
    assert status == 200, view
    assert headers["cache-control"] == "no-store"
    assert view["caller_id"] == CALLER and view["callback_url"] == HOOK_A and view["test_mode"] is True
    assert view["updated_by"] == ADMIN and view["version"] == 1
    assert view["callback_secret"] == {"configured": True, "rotating": False, "rotated_at": None}
    secret = view["new_secret"]
    assert isinstance(secret, str) and len(secret) >= 43
    status, _, again = admin_api("GET", f"/v1/admin/callers/{CALLER}")
    assert status == 200 and again["new_secret"] is None and again["callback_url"] == HOOK_A
    assert secret not in json.dumps(again)
    # the principal's ARN finds the caller id (a role session is its role)
    status, _, found = admin_api("GET", "/v1/admin/callers", query={"principal": PRINCIPAL})
    assert status == 200 and found["caller_id"] == CALLER and found["principal"] == PRINCIPAL
    session = "arn:aws:sts::123456789012:assumed-role/orders/task-1"
    status, _, role = admin_api("GET", "/v1/admin/callers", query={"principal": session})
    assert status == 200 and role["principal"] == "arn:aws:iam::123456789012:role/orders"
    assert role["callback_url"] is None and role["version"] == 0


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"/v1/admin/callers/{CALLER}", None),
        ("GET", "/v1/admin/callers?principal=arn:aws:iam::123456789012:user/x", None),
        ("PUT", f"/v1/admin/callers/{CALLER}", {"callback_url": HOOK_A}),
        ("POST", f"/v1/admin/callers/{CALLER}/secret", None),
        ("DELETE", f"/v1/admin/callers/{CALLER}/secret/previous", None),
    ],
)
def test_a_caller_that_is_not_an_admin_gets_403(admin_api: Any, method: str, path: str, body: Any) -> None:
    status, headers, problem = admin_api(method, path, body, principal=PRINCIPAL)
    assert status == 403 and headers["content-type"] == PROBLEM
    assert problem["type"].endswith("/not-admin")
    assert admin_api("GET", f"/v1/admin/callers/{CALLER}")[2]["version"] == 0  # nothing changed


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "http://a.hooks.example/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://inside.hooks.example/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://169.254.169.254/latest"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://[::ffff:127.0.0.1]/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://u:p@a.hooks.example/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://nowhere.example/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"callback_url": "https://a.hooks.example:99999/x"}, "callback_url"),
        (f"/v1/admin/callers/{CALLER}", {"flag_context": {"caller": "x"}}, "flag_context"),
        (f"/v1/admin/callers/{CALLER}", {"test_mode": "yes"}, "test_mode"),
        (f"/v1/admin/callers/{CALLER}", {"unknown": 1}, "unknown"),
        ("/v1/admin/callers/not-a-caller-id", {"test_mode": True}, "caller_id"),
    ],
)
def test_bad_input_is_a_400_problem_and_changes_nothing(admin_api: Any, path: str, body: Any, field: str) -> None:
    status, headers, problem = admin_api("PUT", path, body)
    assert status == 400 and headers["content-type"] == PROBLEM, problem
    assert field in {error["field"] for error in problem.get("errors", [])}, problem
    status, _, view = admin_api("GET", f"/v1/admin/callers/{CALLER}")
    assert status == 200 and view["version"] == 0 and view["callback_secret"]["configured"] is False


def test_an_unknown_principal_is_a_400_problem(admin_api: Any) -> None:
    status, _, problem = admin_api("GET", "/v1/admin/callers", query={"principal": "arn:aws:s3:::a-bucket-of-mine"})
    assert status == 400 and problem["errors"][0]["field"] == "principal"


def test_a_rotation_gives_two_valid_secrets_until_it_is_ended(admin_api: Any, clock: FakeClock) -> None:
    first = put(admin_api, CALLER, {"callback_url": HOOK_A})[2]["new_secret"]
    status, _, rotated = admin_api("POST", f"/v1/admin/callers/{CALLER}/secret")
    assert status == 200 and rotated["new_secret"] not in (None, first)
    assert rotated["callback_secret"]["rotating"] is True
    status, headers, problem = admin_api("DELETE", f"/v1/admin/callers/{CALLER}/secret/previous")
    assert status == 409 and problem["type"].endswith("/rotation-too-recent")
    assert int(headers["retry-after"]) == SECRET_CACHE.total_seconds()
    clock.advance(SECRET_CACHE.total_seconds())
    status, _, ended = admin_api("DELETE", f"/v1/admin/callers/{CALLER}/secret/previous")
    assert status == 200 and ended["callback_secret"]["rotating"] is False and ended["new_secret"] is None
    assert admin_api("DELETE", f"/v1/admin/callers/{B_CALLER}/secret/previous")[0] == 404


def send(api: Any, principal: str, to: str) -> str:
    body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": f"k-{to}"}, principal=principal)
    assert status == 202, view
    return str(view["message_id"])


def test_events_of_one_caller_never_reach_another_callers_receiver(admin_api: Any, clock: FakeClock) -> None:
    # Given two callers with receivers of their own, and a third with none
    secret_a = put(admin_api, CALLER, {"callback_url": HOOK_A})[2]["new_secret"]
    secret_b = put(admin_api, B_CALLER, {"callback_url": HOOK_B})[2]["new_secret"]
    endpoint = RecordingEndpoint()
    pump, _ = status_out_harness(
        admin_api.services.settings, clock=clock, endpoint=endpoint, resolver=dns(), with_callbacks=True
    )
    # When each sends, and the third one too
    mine = send(admin_api, PRINCIPAL, "alice@example.com")
    theirs = send(admin_api, B_PRINCIPAL, "bob@example.com")
    nobody = send(admin_api, "arn:aws:iam::123456789012:user/no-receiver", "carol@example.com")
    pump.pump()
    # Then each receiver got its own caller's events only, signed with its own secret
    now = int(clock.now().timestamp())
    for url, message_id, secret, other in ((HOOK_A, mine, secret_a, secret_b), (HOOK_B, theirs, secret_b, secret_a)):
        posts = endpoint.to(url)
        assert {json.loads(p.body)["data"]["message_id"] for p in posts} == {message_id}, url
        assert len(posts) == 2  # sending, accepted
        for post in posts:
            assert verify(secret, post.headers["Sendledger-Signature"], post.body, now)
            assert not verify(other, post.headers["Sendledger-Signature"], post.body, now)
    assert {p.url for p in endpoint.posts} == {HOOK_A, HOOK_B}
    assert nobody not in {json.loads(p.body)["data"]["message_id"] for p in endpoint.posts}
    assert {p.address for p in endpoint.to(HOOK_B)} == {"2606:4700:4700::1111"}  # the vetted address
