"""Methods and paths: an unknown path is a 404, a method a path does not take a 405 with Allow,
both problem+json; no method or path reaches the handler as a crash.

These answers come before any route runs, so most tests need no AWS (no `api` fixture).
"""

import json

import pytest

from sendledger import names
from sendledger.handlers import webhooks
from sendledger.handlers.api import lambda_handler
from sendledger.handlers.api_routes import openapi_json
from tests.support.fakes import ADMIN, FakeLambdaContext, api_event

PROBLEM_JSON = "application/problem+json"
DOCUMENT = json.loads(openapi_json())


def with_head(methods: list[str]) -> list[str]:
    """HEAD is GET without the body: every GET route also takes it."""
    return sorted({*methods, "HEAD"} if "GET" in methods else methods)


# Every route with a concrete path: the documented ones, and the document itself.
ROUTES = {
    path.replace("{message_id}", "msg_x").replace("{recipient}", "a%40example.com"): with_head(
        [method.upper() for method in operations]
    )
    for path, operations in DOCUMENT["paths"].items()
} | {"/openapi.json": ["GET", "HEAD"]}
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT", "FOO", "M-SEARCH", "get", ""]
UNKNOWN_PATHS = ["/", "/nope", "/v1", "/v1/messages/a/b", "/v1/suppressions", "/V1/MESSAGES", "/v1/admin/suppressions"]


def call(method, path, body=None, **kwargs):
    # As API Gateway routes them: the providers' webhooks to their own function, every other route to the api.
    handler = webhooks.lambda_handler if path.startswith(names.PROVIDERS_PATH) else lambda_handler
    response = handler(api_event(method, path, body, principal=ADMIN, **kwargs), FakeLambdaContext())
    headers = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
    headers.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
    return response["statusCode"], headers, json.loads(response["body"]) if response.get("body") else None


def test_the_route_table_covers_the_api():
    assert len(ROUTES) >= 7 and ROUTES["/v1/admin/suppressions/a%40example.com"] == ["DELETE", "GET", "HEAD", "PUT"]


@pytest.mark.parametrize("path", list(ROUTES))
@pytest.mark.parametrize("method", METHODS)
def test_a_method_the_path_does_not_take_is_405_with_allow(path, method):
    if method in ROUTES[path]:
        pytest.skip("the route takes it")
    # Given a known path and any other method token (HEAD and OPTIONS included)
    status, headers, problem = call(method, path)
    # Then 405, the route's methods in Allow, as a problem
    assert status == 405, problem
    assert headers["allow"] == ", ".join(ROUTES[path])
    assert headers["content-type"] == PROBLEM_JSON
    assert problem["type"].endswith("method-not-allowed") and problem["status"] == 405 and problem["title"]


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
@pytest.mark.parametrize("method", ["GET", "POST", "HEAD", "OPTIONS", "TRACE", "FOO"])
def test_an_unknown_path_is_404_for_every_method(path, method):
    status, headers, problem = call(method, path)
    assert status == 404 and headers["content-type"] == PROBLEM_JSON
    assert "allow" not in headers and problem["type"].endswith("not-found") and problem["status"] == 404


@pytest.mark.parametrize(
    "raw_body", ["[" * 60_000, '{"to": ' + "1" * 5000 + "}", "{not json"], ids=["deep", "huge-int", "bad"]
)
def test_a_lower_case_method_does_not_skip_the_body_checks(raw_body):
    # `post` is not POST (methods are case-sensitive): it must not reach the route unchecked
    status, headers, problem = call("post", "/v1/messages", raw_body=raw_body, headers={"Idempotency-Key": "k"})
    assert status == 405 and headers["allow"] == "GET, HEAD, POST" and problem["status"] == 405


@pytest.mark.parametrize(
    ("field", "value", "status"),
    [("httpMethod", None, 405), ("httpMethod", ..., 405), ("path", None, 404), ("path", ..., 404), ("path", "", 404)],
)
def test_an_event_without_method_or_path_is_a_problem_not_a_crash(field, value, status):
    event = api_event("GET", "/healthz")
    if value is ...:
        del event[field]
    else:
        event[field] = value
    response = lambda_handler(event, FakeLambdaContext())
    assert response["statusCode"] == status
    assert response["multiValueHeaders"]["Content-Type"] == [PROBLEM_JSON]


def test_an_event_without_caller_identity_is_a_403_not_a_crash(api, services):
    assert services.settings.local_principal is None
    event = api_event("GET", "/v1/messages/msg_x")
    del event["requestContext"]["identity"]
    response = lambda_handler(event, FakeLambdaContext())
    assert response["statusCode"] == 403
    assert response["multiValueHeaders"]["Content-Type"] == [PROBLEM_JSON]
    assert json.loads(response["body"])["type"].endswith("/unknown-caller")


def test_an_empty_multi_value_content_type_is_a_415_not_a_crash():
    event = api_event("POST", "/v1/messages", {"x": 1}, headers={"Idempotency-Key": "k"})
    event["multiValueHeaders"]["Content-Type"] = []
    response = lambda_handler(event, FakeLambdaContext())
    assert response["statusCode"] == 415
