"""No request yields a 5xx; every 4xx is an RFC 9457 problem.

Schemathesis generates requests (valid and invalid) from the OpenAPI document the API serves;
each one becomes an API Gateway event for the real ``api`` handler under moto. Named cases
below cover what generators do not produce (JSON escapes, nesting, header edge cases) and
are not already in tests/integration/test_bad_input.py.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core import NOT_SET

from sendledger.handlers.api_routes import openapi_json
from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import FIGURES, PROBLEM_JSON, Answer, Client
from tests.support.fakes import ADMIN, PRINCIPAL, FakeLambdaContext, api_event

SCHEMA = schemathesis.openapi.from_dict(json.loads(openapi_json()))
OPERATIONS = {f"{op.method.upper()} {op.path}": op for op in (r.ok() for r in SCHEMA.get_all_operations())}
EXAMPLES = {GenerationMode.POSITIVE: 15, GenerationMode.NEGATIVE: 15}  # 30 per operation
FUZZED: Counter[str] = Counter()

ALERT = {
    "channel": "email",
    "to": "alice@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "x"},
}


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedWorld]:
    """One moto world for the module (state accumulates, which only makes inputs more varied)."""
    with shared_world() as world:
        yield world
    print(f"\nexamples fuzzed per operation: {dict(FUZZED)} (total {sum(FUZZED.values())})")


@pytest.fixture
def client(shared: SharedWorld) -> Client:
    shared.healthy_watermarks()
    return shared.client


def as_request(case: Any) -> dict[str, Any]:
    """A generated case as the arguments of an API Gateway event (what the gateway would pass)."""
    path = case.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    headers = {str(k): str(v) for k, v in (case.headers or {}).items()}
    query = {str(k): str(v) for k, v in (case.query or {}).items()} or None
    raw_body = None
    if case.body is not NOT_SET:
        media = case.media_type or "application/json"
        headers.setdefault("Content-Type", media)
        body = case.body
        if isinstance(body, bytes):  # a mutated media type: the gateway hands the text on as is
            raw_body = body.decode("latin-1")
        elif "json" in media or not isinstance(body, str):
            raw_body = json.dumps(body)
        else:
            raw_body = body
    principal = ADMIN if "/admin/" in path else PRINCIPAL
    return {"method": case.method.upper(), "path": path, "headers": headers, "query": query, "raw_body": raw_body} | {
        "principal": principal
    }


def assert_not_a_server_error(answer: Answer, request: Any) -> None:
    assert answer.crashed is None, (answer, request)  # an unhandled exception is a 502 at the gateway
    assert answer.status < 500, (answer, request)
    if 400 <= answer.status < 500:
        assert answer.headers.get("content-type") == PROBLEM_JSON, (answer, request)
        body = answer.body
        assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == answer.status, answer
    else:
        assert answer.headers.get("content-type") == "application/json", (answer, request)


@pytest.mark.parametrize("mode", list(EXAMPLES), ids=lambda m: m.value)
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_generated_requests_never_get_a_5xx(client, operation, mode):
    op = OPERATIONS[operation]
    if mode is GenerationMode.NEGATIVE and not (op.path_parameters or op.query or op.headers or op.body):
        pytest.skip("nothing to make invalid")

    # Given any request schemathesis derives from the served document
    @settings(
        max_examples=EXAMPLES[mode],
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=op.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        request = as_request(case)
        # When it reaches the handler
        answer = client(
            request["method"],
            request["path"],
            raw_body=request["raw_body"],
            headers=request["headers"],
            query=request["query"],
            principal=request["principal"],
        )
        FUZZED[operation] += 1
        FIGURES["fuzzed_requests"] += 1
        # Then: never a 5xx, and a 4xx is always problem+json
        assert_not_a_server_error(answer, request)

    try:
        run()
    except Unsatisfiable:
        pytest.skip("schemathesis cannot make this operation's parameters invalid")
    assert FUZZED[operation] > 0


# --- named cases ---------------------------------------------------------------------------
def post(client: Client, raw: str, key: str | None = "fuzz-key", path: str = "/v1/messages", **headers: str) -> Answer:
    all_headers = {"Idempotency-Key": key} if key is not None else {}
    return client("POST", path, raw_body=raw, headers={**all_headers, **headers})


NAMED_4XX = {
    "key-255-chars-is-fine": (json.dumps(ALERT), {"Idempotency-Key": "k" * 255}, 202),
    "key-256-chars": (json.dumps(ALERT), {"Idempotency-Key": "k" * 256}, 400),
    "key-over-header-limit": (json.dumps(ALERT), {"Idempotency-Key": "k" * 1025}, 400),
    "key-with-tab": (json.dumps(ALERT), {"Idempotency-Key": "a\tb"}, 400),
    "key-with-del": (json.dumps(ALERT), {"Idempotency-Key": "a\x7fb"}, 400),
    "key-empty": (json.dumps(ALERT), {"Idempotency-Key": ""}, 400),
    "key-empty-quoted": (json.dumps(ALERT), {"Idempotency-Key": '""'}, 400),
    "key-quoted-bad-escape": (json.dumps(ALERT), {"Idempotency-Key": '"a\\b"'}, 400),
    "key-quoted-dangling-escape": (json.dumps(ALERT), {"Idempotency-Key": '"ab\\"'}, 400),
    "body-array": ("[]", {}, 400),
    "body-null": ("null", {}, 400),
    "body-string": ('"hello"', {}, 400),
    "body-number": ("42", {}, 400),
    "body-with-bom": ("\ufeff" + json.dumps(ALERT), {}, 400),
    "nan-deadline": (
        json.dumps(
            {**ALERT, "escalation": {"deadline_seconds": 1, "fallback": [{"channel": "sms", "to": "+1"}]}}
        ).replace('"deadline_seconds": 1', '"deadline_seconds": NaN'),
        {},
        400,
    ),
    "deadline-zero": (
        json.dumps({**ALERT, "escalation": {"deadline_seconds": 0, "fallback": [{"channel": "sms", "to": "+1"}]}}),
        {},
        400,
    ),
    "six-fallbacks": (
        json.dumps({**ALERT, "escalation": {"deadline_seconds": 60, "fallback": [{"channel": "sms", "to": "+1"}] * 6}}),
        {},
        400,
    ),
    "twenty-one-params": (json.dumps({**ALERT, "params": {f"p{i}": "v" for i in range(21)}}), {}, 400),
    "param-not-a-string": (json.dumps({**ALERT, "params": {"summary": 1}}), {}, 400),
    "phone-on-email-channel": (json.dumps({**ALERT, "to": "+12065550123"}), {}, 400),
    "moderately-nested-json": ("[" * 900 + "]" * 900, {}, 400),
    "charset-parameter-is-fine": (json.dumps(ALERT), {"Content-Type": "application/json; charset=utf-8"}, 202),
    "content-type-with-space-is-fine": (json.dumps(ALERT), {"Content-Type": "application/json ; charset=UTF-8"}, 202),
}


@pytest.mark.parametrize("name", list(NAMED_4XX))
def test_named_bad_requests(client, name):
    raw, headers, expected = NAMED_4XX[name]
    # Given one hand-made request; When it is posted
    answer = (
        post(client, raw, **headers) if "Idempotency-Key" not in headers else post(client, raw, key=None, **headers)
    )
    # Then the documented answer, and never a server error
    assert answer.status == expected, answer
    assert_not_a_server_error(answer, name)


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("PATCH", "/v1/messages", None, 405),
        ("PATCH", "/v1/nothing", None, 404),
        ("GET", "/v1/messages/msg_" + "A" * 3000, None, 404),
        ("GET", "/v1/messages/msg_%00%FF", None, 404),
        ("GET", "/v1/suppressions/%ZZ", None, 400),
        ("GET", "/v1/suppressions/a%00%40example.com", None, 400),
        ("GET", "/v1/suppressions/" + "a" * 3000 + "%40example.com", None, 400),
        ("DELETE", "/v1/admin/suppressions/a%40example.com", {"reason": ""}, 400),
        ("DELETE", "/v1/admin/suppressions/a%40example.com", {"reason": "r" * 501}, 400),
    ],
)
def test_named_bad_paths_and_queries(client, method, path, query, expected):
    # Given a malformed path or query; Then the documented 4xx problem, never a server error
    answer = client(method, path, query=query, principal=ADMIN)
    assert answer.status == expected, answer
    assert_not_a_server_error(answer, path)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/password-resets/consume", {"account_id": "has space", "token": "t"}),
        ("/v1/password-resets/consume", {"account_id": "a", "token": "t" * 513}),
        ("/v1/password-resets", {"account_id": "a", "email": "x" * 300 + "@example.com"}),
        ("/v1/password-resets", {"account_id": "a" * 129, "email": "a@example.com"}),
    ],
)
def test_named_bad_reset_bodies(client, path, body):
    # Given a reset body over a field limit; Then 400, never a server error
    answer = client("POST", path, body)
    assert answer.status == 400, answer
    assert_not_a_server_error(answer, body)


@pytest.mark.parametrize(("body", "status"), [("e30=", 400), ("e30=" * 25_000, 413)])
def test_base64_bodies_are_refused(client, body, status):
    from sendledger.handlers import api as handler

    # Given a binary (base64) body, small or over 64 KiB once decoded
    event = api_event("POST", "/v1/messages", raw_body=body, headers={"Idempotency-Key": "b64"})
    event["isBase64Encoded"] = True
    # Then it is refused with a problem before any parsing
    response = handler.lambda_handler(event, FakeLambdaContext())
    assert response["statusCode"] == status
    assert response["multiValueHeaders"]["Content-Type"] == [PROBLEM_JSON]


def test_deeply_nested_json_is_a_400_not_a_crash(client):
    # Given a body nested deeper than the parser's recursion limit, still under 64 KiB
    answer = post(client, "[" * 60_000)
    # Then a 400 problem, not a crash
    assert_not_a_server_error(answer, "deep nesting")
    assert answer.status == 400


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/password-resets/consume"])
def test_huge_integer_literal_is_a_400_not_a_crash(client, path):
    # Given an integer literal over Python's 4300-digit limit
    answer = post(client, '{"account_id": "a", "token": ' + "1" * 5000 + "}", path=path)
    # Then a 400 problem, not a crash
    assert_not_a_server_error(answer, "huge integer")
    assert answer.status == 400


def test_lone_surrogate_in_params_is_a_400_not_a_crash(client):
    # Given a lone surrogate escape in a params value (valid JSON, not encodable text)
    answer = post(client, json.dumps(ALERT).replace('"x"', '"\\ud800"'))
    assert_not_a_server_error(answer, "surrogate")
    assert answer.status == 400


def test_content_type_is_case_insensitive(client):
    # Given a media type spelled in capitals (RFC 9110 8.3.1: case-insensitive)
    answer = post(client, json.dumps(ALERT), **{"Content-Type": "Application/JSON"})
    assert_not_a_server_error(answer, "Application/JSON")
    assert answer.status == 202


def test_surrogates_in_plain_string_fields_are_400(client):
    # Given lone surrogate escapes in fields pydantic validates as str
    for path, raw in [
        ("/v1/password-resets/consume", '{"account_id": "a", "token": "\\ud800"}'),
        ("/v1/password-resets", '{"account_id": "a", "email": "a\\ud800@example.com"}'),
        ("/v1/messages", json.dumps({**ALERT, "to": "al\\udc00ice@example.com"}).replace("\\\\", "\\")),
    ]:
        # Then a 400 problem, not a crash
        answer = post(client, raw, path=path)
        assert answer.status == 400, (path, answer)
        assert_not_a_server_error(answer, raw)
