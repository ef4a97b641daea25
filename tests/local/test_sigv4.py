"""SigV4 on the local gateway, checked with botocore's own signer (fake handler, no AWS)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests

from local.auth import AuthMode, LocalAuth
from local.constants import ENV_LOCAL_AUTH, ENV_LOCAL_CREDENTIALS, LOCAL_PRINCIPAL
from local.gateway import Gateway
from local.sigv4 import MAX_CLOCK_SKEW
from sendledger import names
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import ADMIN, APP, APP2, signed_headers, signed_request
from tests.local.test_local_gateway import FakeHandler

GatewayFactory = Callable[..., Gateway]


@pytest.fixture
def fake() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
def make_gateway(fake: FakeHandler) -> Iterator[GatewayFactory]:
    started: list[Gateway] = []

    def make(environ: dict[str, str] | None = None, skew: timedelta = timedelta(0)) -> Gateway:
        auth = LocalAuth.from_env(environ or {}, clock=lambda: datetime.now(UTC) + skew)
        gateway = Gateway(fake, principal=LOCAL_PRINCIPAL, routes=names.API_ROUTES, port=0, auth=auth)
        gateway.start()
        started.append(gateway)
        return gateway

    yield make
    for gateway in started:
        gateway.stop()


def problem_of(response: requests.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    document = response.json()
    assert document["status"] == status
    detail: str = document["detail"]
    return detail


def identity(fake: FakeHandler) -> dict[str, str]:
    ((event, _),) = fake.calls
    found: dict[str, str] = event["requestContext"]["identity"]
    return found


def test_a_signed_request_acts_as_its_credentials_iam_user(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    body = json.dumps({"channel": "email"}).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": "k-1"}
    response = signed_request("POST", f"{gateway.url}/v1/messages", body, headers, credential=APP2)
    assert response.status_code == 202
    seen = identity(fake)
    assert seen["userArn"] == "arn:aws:iam::123456789012:user/app2"
    assert seen["accessKey"] == APP2.access_key
    assert seen["caller"] == seen["user"] == APP2.user_id != APP.user_id
    assert seen["caller"].startswith("AIDA")
    assert json.loads(fake.calls[0][0]["body"]) == {"channel": "email"}


def test_path_encoding_and_query_are_part_of_the_signature(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/v1/admin/suppressions/a%2Bb%40example.com?reason=lifted%20by%20support&z=1&a=%2F"
    assert signed_request("DELETE", url, credential=ADMIN).status_code == 202
    assert identity(fake)["userArn"].endswith(":user/admin")
    # The same signature on another recipient or another reason is not valid.
    for forged in (url.replace("a%2Bb", "c%2Bd"), url.replace("support", "anyone")):
        headers = signed_headers("DELETE", url, credential=ADMIN)
        response = requests.delete(forged, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)
        assert "signature does not match" in problem_of(response, 403)
    assert len(fake.calls) == 1


def test_a_tampered_signature_is_403(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/v1/messages/msg_1"
    headers = signed_headers("GET", url)
    last = headers["Authorization"][-1]
    headers["Authorization"] = headers["Authorization"][:-1] + ("0" if last != "0" else "1")
    response = requests.get(url, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)
    assert "signature does not match" in problem_of(response, 403)
    assert fake.calls == []


def test_a_signature_with_another_secret_or_region_is_403(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/healthz"
    impostor = APP.__class__(APP.name, APP.access_key, "not-the-secret")
    assert "signature does not match" in problem_of(signed_request("GET", url, credential=impostor), 403)
    assert "credential scope" in problem_of(signed_request("GET", url, region="eu-west-1"), 403)
    assert fake.calls == []


def test_an_unknown_access_key_is_403(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    stranger = APP.__class__("stranger", "AKIASTRANGER0000001", "whatever")
    response = signed_request("GET", f"{gateway.url}/healthz", credential=stranger)
    assert "access key is not one of the local credentials" in problem_of(response, 403)
    assert fake.calls == []


@pytest.mark.parametrize("direction", [1, -1])
def test_clock_skew_over_five_minutes_is_403(make_gateway: GatewayFactory, fake: FakeHandler, direction: int) -> None:
    late = make_gateway(skew=direction * (MAX_CLOCK_SKEW + timedelta(seconds=30)))
    assert "sign it again" in problem_of(signed_request("GET", f"{late.url}/healthz"), 403)
    within = make_gateway(skew=direction * (MAX_CLOCK_SKEW - timedelta(seconds=30)))
    assert signed_request("GET", f"{within.url}/healthz").status_code == 202
    assert len(fake.calls) == 1


def test_admin_routes_take_only_the_admin_credential(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/v1/admin/suppressions/bob%40example.com"
    body = json.dumps({"reason": "asked to stop"}).encode()
    headers = {"Content-Type": "application/json"}
    for credential in (APP, APP2):
        response = signed_request("PUT", url, body, headers, credential=credential)
        assert "sign with the admin credential" in problem_of(response, 403)
    assert fake.calls == []
    assert signed_request("PUT", url, body, headers, credential=ADMIN).status_code == 202
    assert identity(fake)["userArn"] == ADMIN.arn


def test_a_body_other_than_the_signed_one_is_403(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/v1/messages"
    signed_body = json.dumps({"to": "alice@example.com"}).encode()
    other_body = json.dumps({"to": "mallory@example.com"}).encode()
    headers = signed_headers("POST", url, signed_body, {"Content-Type": "application/json"})
    response = requests.post(url, data=other_body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)
    assert "signature does not match" in problem_of(response, 403)
    # A signer that sends the payload hash header (S3-style) is told which part differs.
    declared = signed_headers(
        "POST", url, signed_body, {"X-Amz-Content-SHA256": hashlib.sha256(signed_body).hexdigest()}
    )
    response = requests.post(url, data=other_body, headers=declared, timeout=REQUEST_TIMEOUT_SECONDS)
    assert "body does not match its x-amz-content-sha256" in problem_of(response, 403)
    assert fake.calls == []
    assert requests.post(url, data=signed_body, headers=declared, timeout=REQUEST_TIMEOUT_SECONDS).status_code == 202


def test_malformed_authorization_headers_are_403_never_5xx(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/healthz"
    good = signed_headers("GET", url)
    credential = good["Authorization"].split("Credential=")[1].split(",")[0]
    for value in (
        "Bearer abc",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 Credential=x, SignedHeaders=host, Signature=00",
        f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=x-amz-date, Signature=00",
        f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host;x-amz-date;x-missing, Signature=00",
        f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=x-amz-date;host, Signature=00",
        good["Authorization"] + ", Signature=00",
    ):
        response = requests.get(url, headers={**good, "Authorization": value}, timeout=REQUEST_TIMEOUT_SECONDS)
        problem_of(response, 403)
    bad_date = {**good, "X-Amz-Date": "yesterday"}
    assert "X-Amz-Date" in problem_of(requests.get(url, headers=bad_date, timeout=REQUEST_TIMEOUT_SECONDS), 403)
    assert fake.calls == []


def test_unsigned_requests_act_as_the_local_principal_unless_sigv4_mode(
    make_gateway: GatewayFactory, fake: FakeHandler
) -> None:
    open_gateway = make_gateway()
    assert requests.get(f"{open_gateway.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 202
    assert identity(fake)["userArn"] == LOCAL_PRINCIPAL
    strict = make_gateway({ENV_LOCAL_AUTH: "sigv4"})
    assert strict.auth.mode is AuthMode.SIGV4
    for path in ("/v1/messages/m1", "/v1/admin/suppressions/bob%40example.com?reason=x"):
        response = requests.request(
            "DELETE" if "admin" in path else "GET", f"{strict.url}{path}", timeout=REQUEST_TIMEOUT_SECONDS
        )
        assert "sign the request" in problem_of(response, 403)
    assert len(fake.calls) == 1
    assert signed_request("GET", f"{strict.url}/healthz").status_code == 202
    # A readiness check needs no credential in either mode; it answers as the local principal.
    assert requests.get(f"{strict.url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 202
    assert fake.calls[-1][0]["requestContext"]["identity"]["userArn"] == LOCAL_PRINCIPAL
    # The local-only routes are the operator's: in sigv4 mode the admin credential's alone
    assert requests.get(f"{strict.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 403


def test_credentials_come_from_the_environment(make_gateway: GatewayFactory, fake: FakeHandler) -> None:
    gateway = make_gateway({ENV_LOCAL_CREDENTIALS: "ci:AKIACI0000000000001:ci-secret"})
    ci = gateway.auth.credentials[0]
    assert (ci.name, ci.arn) == ("ci", "arn:aws:iam::123456789012:user/ci")
    assert signed_request("GET", f"{gateway.url}/healthz", credential=ci).status_code == 202
    assert "access key is not one" in problem_of(signed_request("GET", f"{gateway.url}/healthz"), 403)
    for bad in ("ci:AKIA1", "a:K1:s,b:K1:t", "a b:K:s"):
        with pytest.raises(ValueError, match=ENV_LOCAL_CREDENTIALS):
            LocalAuth.from_env({ENV_LOCAL_CREDENTIALS: bad})
    with pytest.raises(ValueError, match=ENV_LOCAL_AUTH):
        LocalAuth.from_env({ENV_LOCAL_AUTH: "iam"})


def test_the_access_line_names_the_route_template_and_the_caller(
    make_gateway: GatewayFactory, caplog: pytest.LogCaptureFixture
) -> None:
    gateway = make_gateway()
    caplog.set_level(logging.DEBUG)
    url = f"{gateway.url}/v1/admin/suppressions/bob%40example.com?reason=customer%20bob%20asked"
    signed_request("DELETE", url, credential=ADMIN)
    signed_request("DELETE", url, credential=APP)
    requests.get(f"{gateway.url}/v1/suppressions/carol%40example.com", timeout=REQUEST_TIMEOUT_SECONDS)
    requests.get(f"{gateway.url}/v1/nowhere/dave%40example.com", timeout=REQUEST_TIMEOUT_SECONDS)
    access = [r.getMessage() for r in caplog.records if r.name == "local.access"]
    assert [line.split(" ms ")[0].rsplit(" ", 1)[0] for line in access] == [
        "DELETE /v1/admin/suppressions/{recipient} 202",
        "DELETE /v1/admin/suppressions/{recipient} 403",
        "GET /v1/suppressions/{recipient} 202",
        "GET - 404",
    ]
    assert [line.rsplit(" ", 1)[1] for line in access] == ["admin", "-", "local", "-"]
    gateway_lines = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("sendledger", "local")))
    for secret in ("bob", "carol", "dave", "asked", "%40"):
        assert secret not in gateway_lines


@pytest.mark.parametrize("path", ["/local/outbox", "/local/events", "/local/console", "/local/suppressions"])
def test_in_sigv4_mode_the_local_routes_take_the_admin_credential_only(make_gateway: GatewayFactory, path) -> None:
    # Given the stack in sigv4 mode (the outbox shows reset links)
    gateway = make_gateway({ENV_LOCAL_AUTH: "sigv4"})
    url = f"{gateway.url}{path}"
    # Then an unsigned request is refused, saying how to get in
    detail = problem_of(requests.get(url, timeout=REQUEST_TIMEOUT_SECONDS), 403)
    assert "admin credential" in detail and f"{ENV_LOCAL_AUTH}=open" in detail
    # And so is a caller's credential
    assert "may not read the local routes" in problem_of(signed_request("GET", url, credential=APP), 403)
    # While the admin credential reads it
    assert signed_request("GET", url, credential=ADMIN).status_code != 403


def test_in_open_mode_the_local_routes_stay_open(make_gateway: GatewayFactory) -> None:
    gateway = make_gateway({})
    assert requests.get(f"{gateway.url}/local/outbox", timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200
